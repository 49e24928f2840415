package e2e

import (
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
)

// lagRow is what these tests read of a `kmm lag -o json` row.
type lagRow struct {
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	SourceEnd int64     `json:"source_end_offset"`
	Next      int64     `json:"next_offset"`
	NextMax   int64     `json:"next_offset_max"`
	Lag       int64     `json:"lag_records"`
	LagMin    int64     `json:"lag_records_min"`
	Exact     bool      `json:"exact"`
	Source    string    `json:"position_source"`
	AsOf      time.Time `json:"as_of"`
	Started   bool      `json:"started"`
}

func lagRows(t *testing.T, args ...string) map[int32]lagRow {
	t.Helper()
	r := Run(t, append([]string{"lag"}, append(args, "-o", "json")...)...)
	var env struct {
		Items []lagRow `json:"items"`
	}
	if r.Code != 0 {
		t.Fatalf("kmm lag exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
		t.Fatalf("kmm lag -o json: %v\n%s", err, r.Stdout)
	}
	m := map[int32]lagRow{}
	for _, it := range env.Items {
		m[it.Partition] = it
	}
	return m
}

// Issue 21: `kmm lag` tells what is on the target now, not what the replicator last flushed.
// With progress flushed every 60 s (MM2's default), right after replication finished every
// partition shows 0 lag from the offset syncs and the target's ends (source named, exact); with
// the replicator killed mid-way, the reported lag bounds the true remaining count (the records
// of the source not on the target, counted on both clusters). The same with Apache MM2.
func TestLagFromTargetTruth(t *testing.T) {
	for _, tool := range []string{"kmm", "MM2"} {
		t.Run(tool, func(t *testing.T) { lagFromTargetTruth(t, tool) })
	}
}

func lagFromTargetTruth(t *testing.T, kind string) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "truth")
	const parts = 3
	bed.A.CreateTopic(t, topic, parts, nil)
	flow := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, flow+".enabled = true", flow+".topics = "+regexp.QuoteMeta(topic))
	// MM2's default progress flush: 60 s.
	data, err := os.ReadFile(props)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(props, []byte(strings.ReplaceAll(string(data), "offset.flush.interval.ms = 500", "offset.flush.interval.ms = 60000")), 0o600); err != nil {
		t.Fatal(err)
	}
	remote := al.A + "." + topic
	const n1 = 6000
	bed.A.Produce(t, seqRecords(topic, parts, 0, n1))

	var k *proc
	var m *mm2Proc
	var base string
	if kind == "kmm" {
		k = startKMM(t, "replicate", props, "--listen", "127.0.0.1:0")
		addr := regexp.MustCompile(`serving http://(127\.0\.0\.1:\d+)`)
		testbed.Eventually(t, 30*time.Second, func() error {
			if mm := addr.FindStringSubmatch(k.Stderr()); mm != nil {
				base = "http://" + mm[1]
				return nil
			}
			return io.EOF
		})
	} else {
		m = startMM2(t, bed, props)
	}
	waitCount(t, bed.B, remote, parts, n1, 2*time.Minute)
	done := time.Now()
	stored := sourcePositions(t, bed.B, al.A, topic)
	rows := lagRows(t, props, "--topic", topic)
	// kmm's replicate names its --listen URL in its lease in __kmm_state, so lag takes the live
	// position from it without --endpoint; MM2 has no such endpoint: the offset syncs and the
	// target's end say it.
	want := "offset-sync+target-end"
	if kind == "kmm" {
		want = "live"
	}
	for p := int32(0); p < parts; p++ {
		r := rows[p]
		if r.Lag != 0 || r.LagMin != 0 || !r.Exact || r.Source != want || !r.Started {
			t.Errorf("%s: partition %d right after replication finished: %+v (stored progress: %v)", kind, p, r, stored)
		}
	}
	t.Logf("%s: lag %s after the last record landed; stored progress then: %v of %d per partition", kind, time.Since(done).Round(time.Millisecond), stored, n1/parts)
	if base != "" {
		// The live position of the running replicate.
		rows := lagRows(t, props, "--topic", topic, "--endpoint", base)
		for p := int32(0); p < parts; p++ {
			if r := rows[p]; r.Lag != 0 || !r.Exact || r.Source != "live" {
				t.Errorf("kmm --endpoint: partition %d: %+v", p, r)
			}
		}
	}

	// Mid-way: more records, the replicator killed while it copies them.
	const n2 = 60000
	// kmm's are produced while it runs: its C data plane keeps up with this producer, so had
	// they all been produced first it could have copied them before the kill below. MM2's are
	// produced first, as before (it is slower, and killed through its script).
	produced := make(chan struct{})
	if k != nil {
		go func() {
			defer close(produced)
			for i := 0; i < 20; i++ { // over ~2 s, so records are still coming when it dies
				bed.A.Produce(t, seqRecords(topic, parts, n1+i*n2/20, n2/20))
				time.Sleep(100 * time.Millisecond)
			}
		}()
	} else {
		bed.A.Produce(t, seqRecords(topic, parts, n1, n2))
		close(produced)
	}
	// Kill as soon as the target holds some of them (polled quickly, so the replicator is still
	// copying; the check below fails the test if it finished first).
	waitAbove(t, bed.B, remote, parts, n1+n2/10, 2*time.Minute)
	if k != nil {
		_ = k.cmd.Process.Kill()
		<-k.done
	} else {
		_ = syscall.Kill(m.pid, syscall.SIGKILL)
		testbed.Eventually(t, 30*time.Second, func() error {
			if syscall.Kill(m.pid, 0) == nil {
				return io.EOF
			}
			return nil
		})
	}
	<-produced
	srcEnds := endOffsets(t, bed.A, topic, parts)
	tgtEnds := endOffsets(t, bed.B, remote, parts)
	rows = lagRows(t, props, "--topic", topic)
	var totalTrue int64
	for p := int32(0); p < parts; p++ {
		r := rows[p]
		// Nothing duplicated (the killed replicator never restarted): the true remaining count
		// is the source's records minus the target's.
		truth := srcEnds[p] - tgtEnds[p]
		totalTrue += truth
		if r.SourceEnd != srcEnds[p] || truth < r.LagMin || truth > r.Lag {
			t.Errorf("%s killed mid-way: partition %d: true remaining %d not within the reported [%d, %d]: %+v", kind, p, truth, r.LagMin, r.Lag, r)
		}
		if r.Exact && r.Lag != truth {
			t.Errorf("%s killed mid-way: partition %d: exact lag %d, true %d", kind, p, r.Lag, truth)
		}
		if r.Source == "stored-progress" && r.Lag-r.LagMin > srcEnds[p]/2 {
			t.Logf("%s: partition %d fell back to stored progress: %+v", kind, p, r)
		}
	}
	if totalTrue == 0 {
		t.Fatalf("%s finished before it was killed: the mid-way case was not exercised", kind)
	}
	t.Logf("%s killed mid-way: %d records not on the target; rows %+v", kind, totalTrue, rows)
}

// waitAbove polls (every 10 ms) until topic on c holds more than n records.
func waitAbove(t *testing.T, c testbed.Cluster, topic string, parts int, n int64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var total int64
		for _, e := range endOffsets(t, c, topic, parts) {
			total += e
		}
		if total > n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on %s holds %d records after %s, want more than %d", topic, c.Name, total, timeout, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
