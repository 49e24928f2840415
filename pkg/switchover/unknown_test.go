package switchover

import (
	"encoding/json"
	"testing"
)

// What is not known is JSON null, never a number (issue 35 item 6): re-reads that could not be
// bounded, and an emergency failover's RPO of a partition whose source end nothing says.
func TestUnknownFiguresAreNull(t *testing.T) {
	b, err := json.Marshal(ExactOffset{Group: "g", Topic: "t", RemoteTopic: "A->B.t", Rereads: -1})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["rereads"] != nil || m["remote_topic"] != "A->B.t" || m["group"] != "g" {
		t.Errorf("unknown re-reads: %s, want rereads null and the other fields", b)
	}
	if b, _ := json.Marshal(ExactOffset{Rereads: 0, Exact: true}); json.Unmarshal(b, &m) != nil || m["rereads"] != float64(0) {
		t.Errorf("exact: %s, want rereads 0", b)
	}

	unknown := RPORow{Topic: "t", Partition: 1, SourceEnd: -1, SnapshotEnd: -1, SnapshotAgeMs: -1, Replicated: 40, RPORecords: -1, RPORecordsMax: -1}
	known := RPORow{Topic: "t", Partition: 0, SourceEnd: 100, SnapshotEnd: 100, SnapshotAgeMs: 1500, Replicated: 90, RPORecords: 10, RPORecordsMax: 12}
	b, err = json.Marshal([]RPORow{unknown, known})
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"source_end", "source_end_snapshot", "snapshot_age_ms", "rpo_records", "rpo_records_max"} {
		if v, ok := rows[0][k]; !ok || v != nil {
			t.Errorf("unknown row: %s = %v (present %v), want null", k, v, ok)
		}
	}
	if rows[0]["replicated"] != float64(40) || rows[1]["rpo_records"] != float64(10) || rows[1]["snapshot_age_ms"] != float64(1500) {
		t.Errorf("rows %s", b)
	}

	if lo, hi := RPOTotals([]RPORow{unknown}); lo != nil || hi != nil {
		t.Errorf("no partition's end known: totals %v %v, want nil (not known), never 0", lo, hi)
	}
	if lo, hi := RPOTotals([]RPORow{unknown, known}); lo == nil || *lo != 10 || hi == nil || *hi != 12 {
		t.Errorf("totals of the known rows: %v %v, want 10 and 12", lo, hi)
	}
}
