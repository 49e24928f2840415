package drshared

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func evidenceFixture() *Evidence {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	at := func(ms int) *time.Time { t := t0.Add(time.Duration(ms) * time.Millisecond); return &t }
	params, _ := json.Marshal(switchover.GroupParams{Group: "billing"})
	p := &plan.Plan{Command: "failover", Flow: "A->B", Journal: "B", Created: t0, Steps: []plan.Step{
		{ID: "drain", Kind: switchover.KindDrain, Cluster: "B", Writes: "nothing: waits until all 2 partition(s) are replicated", Why: "exact translation", Expect: map[string]int64{"partitions": 2}},
		{ID: "commit-offsets/billing", Kind: switchover.KindCommitTranslated, Cluster: "B", Writes: "committed offsets of group billing on B", Why: "the group resumes on B | where it stopped", Params: params},
	}}
	run := &plan.Run{ID: "20261202T030000Z-0001", Command: "failover", Flow: "A->B", State: plan.Done, Started: t0, Host: "ops-1", Steps: []plan.StepRecord{
		{ID: "drain", Kind: switchover.KindDrain, Cluster: "B", Outcome: plan.Applied, Started: at(10), Finished: at(1510), Numbers: map[string]int64{"records_waited_for": 42}},
		{ID: "commit-offsets/billing", Kind: switchover.KindCommitTranslated, Cluster: "B", Outcome: plan.Applied, Started: at(1600), Finished: at(1650),
			Numbers: map[string]int64{"partitions": 2, "exact": 1, "rereads_max": 3, "skips": 0}},
	}}
	var drained int64
	return &Evidence{RPOTotal: &drained, Mode: "planned", Flow: "A->B", Source: "A", Target: "B", By: "alice@ops-1", KMM: "1.2.3", Started: t0, Generated: *at(2000),
		Confirmation: "--yes", Plan: p, Run: run, RTOMillis: 1650, RTONote: "start to the last group commit: consumers may resume on B",
		RPO:     []RPOLine{{Topic: "orders", Partition: 0, SourceEnd: 100, Replicated: 100, How: "drained (exact)"}, {Topic: "orders", Partition: 1, SourceEnd: 80, Replicated: 80, How: "drained (exact)"}},
		RPONote: "drained: every source record is on B",
		CkAges:  []switchover.CheckpointAge{{Group: "billing", Newest: t0.Add(-time.Minute), AgeMs: 60000, Behind: true, Stale: false}},
		Translations: []switchover.ExactOffset{
			{Group: "billing", Topic: "orders", Partition: 0, RemoteTopic: "A.orders", SourceOffset: 90, TargetOffset: 90, Exact: true, Why: "record at 90 on the target equals the record at 90 on the source"},
			{Group: "billing", Topic: "orders", Partition: 1, RemoteTopic: "A.orders", SourceOffset: 70, TargetOffset: 71, Rereads: 3, Why: "duplicates on the target: re-reads ≤ 3, no skip"},
		},
		Checks: []switchover.ShadowCheck{{Group: "billing", ShadowGroup: "kmm-rehearse.billing", Topic: "orders", Partition: 0, RemoteTopic: "A.orders", SourceOffset: 90, ShadowOffset: 90, Result: "equal", Detail: "record 90 on A equals record 90 on B"}},
		Notes:  []string{"a note\nover two lines"},
		Gates: switchover.Gates{{Name: "flow-state", Verdict: switchover.Pass}, {Name: "groups-inactive", Verdict: switchover.Overridden, Override: "--force",
			Problems: []string{"group billing has 1 member(s) on B: stop its consumers first"}}},
	}
}

// What a report does not know is "?", never 0: the RPO of a failover that did not reach the
// cut, a partition whose source end is not known, re-reads that are not known.
func TestEvidenceUnknownIsNotZero(t *testing.T) {
	e := evidenceFixture()
	e.RPOTotal, e.RPONote = nil, "not measured: the failover did not reach the cut"
	e.RPO = []RPOLine{{Topic: "orders", Partition: 0, SourceEnd: -1, Replicated: 40, How: "not known", Records: -1}}
	e.Translations[1].Rereads = -1
	var b bytes.Buffer
	if err := RenderEvidence(&b, e); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| RPO | ? (not measured: the failover did not reach the cut) |", "| orders | 0 | ? | 40 | not known | ? |",
		"| billing | orders | 1 | A.orders | 70 | 71 | bound | ? | 0 |"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, b.String())
		}
	}
}

// The evidence report's Markdown is stable (golden file; go test -run TestEvidenceGolden -update
// rewrites it) and carries the run's numbers.
func TestEvidenceGolden(t *testing.T) {
	var b bytes.Buffer
	if err := RenderEvidence(&b, evidenceFixture()); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("report differs from %s (go test -run TestEvidenceGolden -update):\n%s", golden, got)
	}
	for _, s := range []string{"| RTO | 1650 ms", "| 2 | commit-offsets/billing | applied | 2026-12-02T03:00:01.600Z | 2026-12-02T03:00:01.650Z | 50 ms |",
		"| billing | orders | 1 | A.orders | 70 | 71 | bound | 3 | 0 |", `the group resumes on B \| where it stopped`, "digest `" + evidenceFixture().Plan.Digest() + "`",
		"| groups-inactive | overridden | group billing has 1 member(s) on B: stop its consumers first | --force |"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

// WriteEvidence writes the file; a directory that does not exist is an error.
func TestWriteEvidence(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.md")
	if err := WriteEvidence(p, evidenceFixture()); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || !strings.HasPrefix(string(b), "# kmm failover report: A->B (planned)") {
		t.Fatalf("%v %q", err, b)
	}
	if err := WriteEvidence(filepath.Join(t.TempDir(), "no", "r.md"), evidenceFixture()); err == nil {
		t.Fatal("no error for a missing directory")
	}
}
