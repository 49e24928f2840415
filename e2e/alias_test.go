package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// TestAliasOverrides: MM2 lets a file set a flow's source.cluster.alias and target.cluster.alias
// apart from the clusters' names, and every name its connectors make follows the aliases. kmm
// replicate writes <source alias>.<topic>, <source alias>.checkpoints.internal and
// mm2-offset-syncs.<target alias>.internal; verify (every level) and a planned failover must
// find those, not <cluster>.<topic> (issue 36: verify compared A.orders where replicate wrote
// primary.orders).
func TestAliasOverrides(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	srcAlias, tgtAlias := "p"+al.A, "q"+al.A // contain al.A: deleted with the test's topics
	topic := testbed.Unique(t, "alias")
	group := testbed.Unique(t, "aliasgroup")
	const parts = 2
	bed.A.CreateTopic(t, topic, parts, nil)
	ab := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, ab+".enabled = true", ab+".topics = "+regexp.QuoteMeta(topic), ab+".groups = "+regexp.QuoteMeta(group),
		ab+".source.cluster.alias = "+srcAlias, ab+".target.cluster.alias = "+tgtAlias, ab+".sync.group.offsets.enabled = false")
	remote := srcAlias + "." + topic
	bed.A.Produce(t, seqRecords(topic, parts, 0, 400))
	ctx := context.Background()
	committed := map[int32]int64{0: 120, 1: 150}
	m := map[rdkafka.TP]rdkafka.OffsetMeta{}
	for p, o := range committed {
		m[rdkafka.TP{Topic: topic, Partition: p}] = rdkafka.OffsetMeta{Offset: o}
	}
	if err := bed.A.Admin(t).AlterGroupOffsets(ctx, group, m); err != nil {
		t.Fatal(err)
	}

	k := startKMM(t, "replicate", props)
	waitCount(t, bed.B, remote, parts, 400, 2*time.Minute)
	// The checkpoints of the group, under the source alias.
	ckTopic := srcAlias + ".checkpoints.internal"
	testbed.Eventually(t, time.Minute, func() error {
		ts, err := bed.B.Admin(t).ListTopics(ctx)
		if err != nil {
			return err
		}
		if ts[ckTopic].Partitions == 0 {
			return fmt.Errorf("no %s on B yet", ckTopic)
		}
		// A's heartbeats (written by the reverse pair's herder) are replicated under the
		// source alias too, at the next topic refresh: verify compares them.
		if ts[srcAlias+".heartbeats"].Partitions == 0 {
			return fmt.Errorf("no %s.heartbeats on B yet", srcAlias)
		}
		return nil
	})
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("replicate exit %d", code)
	}
	bTopics, err := bed.B.Admin(t).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := bTopics[al.A+"."+topic]; ok {
		t.Fatalf("replicate wrote %s.%s: the source alias %s is not used", al.A, topic, srcAlias)
	}
	aTopics, err := bed.A.Admin(t).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := aTopics["mm2-offset-syncs."+tgtAlias+".internal"]; !ok {
		t.Fatalf("no mm2-offset-syncs.%s.internal on A", tgtAlias)
	}

	type finding struct {
		Check       string `json:"check"`
		Status      string `json:"status"`
		Topic       string `json:"topic"`
		RemoteTopic string `json:"remote_topic"`
		Reason      string `json:"reason"`
	}
	var env struct {
		Items []struct {
			Findings []finding `json:"findings"`
		} `json:"items"`
	}
	for _, level := range []string{"metadata", "sample", "full"} {
		r := Run(t, "verify", props, "--flow", ab, "--level", level, "-o", "json")
		if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil || len(env.Items) != 1 {
			t.Fatalf("verify --level %s: exit %d: %v\n%s\n%s", level, r.Code, err, r.Stdout, r.Stderr)
		}
		named := 0
		for _, f := range env.Items[0].Findings {
			if f.Status == "FAIL" {
				t.Errorf("verify --level %s: %s %s: FAIL: %s", level, f.Check, f.Topic, f.Reason)
			}
			if f.RemoteTopic == remote {
				named++
			}
			if f.RemoteTopic != "" && f.RemoteTopic != remote && f.RemoteTopic != srcAlias+".heartbeats" {
				t.Errorf("verify --level %s: %s names remote topic %s, replicate wrote %s", level, f.Check, f.RemoteTopic, remote)
			}
			if f.Status == "WARN" && f.Topic != "heartbeats" && (f.Check == "offset-syncs" || f.Check == "checkpoints" || f.Check == "heartbeats" || f.Check == "progress") {
				t.Errorf("verify --level %s: %s %s: WARN: %s (the alias's internal topics were not found)", level, f.Check, f.Topic, f.Reason)
			}
		}
		if r.Code != 0 || named == 0 {
			t.Fatalf("verify --level %s: exit %d, %d finding(s) name %s\n%s\n%s", level, r.Code, named, remote, r.Stdout, r.Stderr)
		}
	}

	r := Run(t, "failover", props, "--flow", ab, "--mode", "planned", "--group", group, "--fence", "none", "--quiet-for", "1s", "--timeout", "2m", "--yes", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("failover: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	var fo struct {
		Items []struct {
			Group        string `json:"group"`
			RemoteTopic  string `json:"remote_topic"`
			Partition    int32  `json:"partition"`
			SourceOffset int64  `json:"source_offset"`
			TargetOffset int64  `json:"target_offset"`
			Exact        bool   `json:"exact"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &fo); err != nil || len(fo.Items) != parts {
		t.Fatalf("failover JSON: %v\n%s", err, r.Stdout)
	}
	for _, it := range fo.Items {
		if it.RemoteTopic != remote || !it.Exact || it.TargetOffset != committed[it.Partition] {
			t.Errorf("failover translated %+v; want %s[%d] at %d, exact", it, remote, it.Partition, committed[it.Partition])
		}
	}
	got, err := bed.B.Admin(t).ListGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for p, o := range committed {
		if g := got[rdkafka.TP{Topic: remote, Partition: p}].Offset; g != o {
			t.Errorf("group %s on B: %s[%d] at %d, want %d (all: %v)", group, remote, p, g, o, got)
		}
	}
	if i := strings.Index(r.Stdout, `"`+al.A+"."+topic); i >= 0 { // (p+al.A).topic contains al.A.topic
		t.Errorf("failover's output names %s.%s: ...%s...", al.A, topic, r.Stdout[max(0, i-300):min(len(r.Stdout), i+100)])
	}
}
