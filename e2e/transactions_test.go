package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/e2e/testbed"
)

// produceTxns writes to partition 0 of topic, with one transactional producer, one transaction
// per batch: each batch's records have the batch's prefix, and batches whose commit flag is false
// are aborted.
func produceTxns(t *testing.T, c testbed.Cluster, topic string, batches []string, commit []bool, per int) {
	t.Helper()
	produceTxnsTo(t, c, topic, 0, batches, commit, per)
}

// produceTxnsTo is produceTxns to partition part.
func produceTxnsTo(t *testing.T, c testbed.Cluster, topic string, part int32, batches []string, commit []bool, per int) {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": c.Bootstrap, "transactional.id": testbed.Unique(t, "txn"), "linger.ms": 0})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	go func() {
		for range p.Events() {
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.InitTransactions(ctx); err != nil {
		t.Fatal(err)
	}
	for b, prefix := range batches {
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < per; i++ {
			if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: part},
				Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if commit[b] {
			err = p.CommitTransaction(ctx)
		} else {
			p.Flush(10000)
			err = p.AbortTransaction(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Source transactions: by default kmm reads the source read_committed (MM2 reads uncommitted), so
// an aborted transaction's records never reach the target, and a group's offset past the gaps the
// aborted records and the transaction markers leave translates to the target's end; with the file's
// `<S>.consumer.isolation.level = read_uncommitted` kmm copies them as MM2 does.
func TestSourceTransactions(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "txn")
	group := testbed.Unique(t, "txngrp")
	bed.A.CreateTopic(t, topic, 1, nil)
	// Source offsets: c1 0-9, marker 10, aborted 11-20, marker 21, c3 22-31, marker 32 (end 33).
	produceTxns(t, bed.A, topic, []string{"c1", "aborted", "c3"}, []bool{true, false, true}, 10)
	if ends := endOffsets(t, bed.A, topic, 1); ends[0] != 33 {
		t.Fatalf("source end %d, want 33 (3 transactions of 10 records and their markers)", ends[0])
	}
	q := regexp.QuoteMeta(topic)
	props := writeProps(t, "A->B.enabled = true", "A->B.topics = "+q, "groups = "+regexp.QuoteMeta(group), "emit.checkpoints.interval.seconds = 1")
	r := Run(t, "config", "explain", props, "--flow", "A->B", "--wide")
	if !regexp.MustCompile(`isolation\.level\s+read_committed\s+kmm default`).MatchString(r.Stdout) {
		t.Errorf("config explain does not show the source consumer's read_committed default:\n%s", r.Stdout)
	}
	k := startKMM(t, "replicate", props)
	waitCount(t, bed.B, "A."+topic, 1, 20, time.Minute)
	// A group that read everything (committed at the end, past the last marker) and one at the
	// first record of the third transaction.
	setOffsets(t, bed.A, group, topic, 33)
	var got map[string]int64
	testbed.Eventually(t, 60*time.Second, func() error {
		got = map[string]int64{}
		for _, g := range []string{group} {
			r := Run(t, "translate-offsets", props, "--flow", "A->B", "--group", g, "-o", "json")
			if r.Code != 0 {
				return fmt.Errorf("translate-offsets %s: exit %d %s", g, r.Code, tail(r.Stderr, 3))
			}
			var doc struct {
				Items []struct {
					Rows []struct {
						TargetOffset int64 `json:"target_offset"`
						Exact        bool  `json:"exact"`
						Bound        int64 `json:"bound"`
					}
				}
			}
			if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
				return fmt.Errorf("translate-offsets json: %v\n%s", err, r.Stdout)
			}
			for _, it := range doc.Items {
				for _, row := range it.Rows {
					got[g] = row.TargetOffset
					// Not asserted yet: exactness across the trailing marker (kmm reports it as
					// bound 1, MM2's rule past the last offset sync; issue 17).
					t.Logf("%s: target offset %d exact=%v bound=%d", g, row.TargetOffset, row.Exact, row.Bound)
				}
			}
		}
		if got[group] != 20 {
			return fmt.Errorf("group at the source end translates to %v, want 20 (the target's end)", got)
		}
		return nil
	})
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("replicate exit %d", code)
	}
	values := func(c testbed.Cluster, topic string, n int) []string {
		var out []string
		for _, r := range c.ConsumeN(t, topic, 1, n, time.Minute) {
			out = append(out, string(r.Value))
		}
		sort.Strings(out)
		return out
	}
	vs := values(bed.B, "A."+topic, 20)
	if len(vs) != 20 || strings.Contains(strings.Join(vs, " "), "aborted") {
		t.Fatalf("target holds %d records %v, want the 20 committed ones", len(vs), vs)
	}
	// kmm lag after a full copy: 0 left, although the source's last offset is a transaction
	// marker no reader ever receives (TestTransactionTailDrained has the failover).
	if err := lagZero(t, props, "A->B", topic, 1); err != nil {
		t.Error(err)
	}

	// MM2's behaviour on request: read_uncommitted copies the aborted records too.
	props2 := writeProps(t, "A->C.enabled = true", "A->C.topics = "+q, "A.consumer.isolation.level = read_uncommitted",
		"C.offset.storage.replication.factor = 1")
	k = startKMM(t, "replicate", props2)
	waitCount(t, bed.C, "A."+topic, 1, 30, time.Minute)
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("replicate (read_uncommitted) exit %d", code)
	}
	if vs := values(bed.C, "A."+topic, 30); !strings.Contains(strings.Join(vs, " "), "aborted-0") {
		t.Fatalf("read_uncommitted: the aborted records were not copied: %v", vs)
	}
}

// A partition whose tail holds no record to copy: the last committed transaction's marker (p0),
// or an aborted transaction and its marker (p1). kmm replicate moves the replicated position to
// the source's end (the copier's end-of-partition events), so `kmm lag` shows 0 left on the idle
// flow and a planned failover, which waits until every partition is drained, completes; the
// groups' offsets translate exactly, at the end and before it.
func TestTransactionTailDrained(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "txtail")
	bed.A.CreateTopic(t, topic, 2, nil)
	// p0: committed 0-9, marker 10 (end 11). p1: committed 0-9, marker 10, aborted 11-20,
	// marker 21 (end 22).
	produceTxnsTo(t, bed.A, topic, 0, []string{"c"}, []bool{true}, 10)
	produceTxnsTo(t, bed.A, topic, 1, []string{"c", "aborted"}, []bool{true, false}, 10)
	if ends := endOffsets(t, bed.A, topic, 2); ends[0] != 11 || ends[1] != 22 {
		t.Fatalf("source ends %v, want [11 22]", ends)
	}
	atEnd, mid := testbed.Unique(t, "end"), testbed.Unique(t, "mid")
	setOffsets(t, bed.A, atEnd, topic, 11, 22)
	setOffsets(t, bed.A, mid, topic, 5, 11) // p1: the first aborted record
	ab := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, ab+".enabled = true", ab+".topics = "+regexp.QuoteMeta(topic))
	k := startKMM(t, "replicate", props)
	remote := al.A + "." + topic
	waitCount(t, bed.B, remote, 2, 20, time.Minute)

	testbed.Eventually(t, 30*time.Second, func() error { return lagZero(t, props, ab, topic, 2) })
	r := Run(t, "failover", props, "--flow", ab, "--mode", "planned", "--group", atEnd, "--group", mid,
		"--fence", "none", "--quiet-for", "1s", "--timeout", "45s", "--yes", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("failover: exit %d\n%s\n%s", r.Code, r.Stdout, tail(r.Stderr, 20))
	}
	var env struct {
		Items []translation `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	want := map[string]int64{atEnd + "/0": 10, atEnd + "/1": 10, mid + "/0": 5, mid + "/1": 10}
	if len(env.Items) != len(want) {
		t.Fatalf("translations: %+v", env.Items)
	}
	for _, it := range env.Items {
		if w := want[fmt.Sprintf("%s/%d", it.Group, it.Partition)]; it.TargetOffset != w || !it.Exact || it.Rereads != 0 {
			t.Errorf("%s[%d] of %s: source %d -> target %d exact=%v rereads=%d, want %d exact", it.Topic, it.Partition, it.Group,
				it.SourceOffset, it.TargetOffset, it.Exact, it.Rereads, w)
		}
	}
	got := groupOffsetsOn(t, bed.B, atEnd, mid)
	for key, w := range want {
		g, p, _ := strings.Cut(key, "/")
		if o := got[fmt.Sprintf("%s %s[%s]", g, remote, p)]; o != w {
			t.Errorf("group %s on %s: committed %d on %s[%s], want %d (all: %v)", g, al.B, o, remote, p, w, got)
		}
	}
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("replicate exit %d", code)
	}
}

// lagZero checks that `kmm lag` shows every one of the parts partitions of topic with 0 records
// left (0 is "off" for --max-lag: the rows are read).
func lagZero(t *testing.T, props, flow, topic string, parts int) error {
	t.Helper()
	r := Run(t, "lag", props, "--flow", flow, "--topic", topic, "-o", "json")
	var env struct {
		Items []struct {
			Partition  int32 `json:"partition"`
			LagRecords int64 `json:"lag_records"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
		return fmt.Errorf("lag -o json: %v\n%s\n%s", err, r.Stdout, r.Stderr)
	}
	if r.Code != 0 || len(env.Items) != parts {
		return fmt.Errorf("lag: exit %d, %d rows, want %d\n%s", r.Code, len(env.Items), parts, tail(r.Stderr, 3))
	}
	for _, it := range env.Items {
		if it.LagRecords != 0 {
			return fmt.Errorf("lag: partition %d has %d record(s) left, want 0: %+v", it.Partition, it.LagRecords, env.Items)
		}
	}
	return nil
}
