package configcmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kmmproject/kmm/mm2conf"
)

// `config check` shows the intervals `kmm replicate` uses (kmm's defaults where the file is
// silent, the file's values where it sets them), MM2's beside them where they differ, and
// exactly-once among the features when it is on: one answer to "how often", the one explain
// and replicate give.
func TestCheckShowsReplicateIntervals(t *testing.T) {
	p := write(t, `clusters = A, B
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
A->B.enabled = true
A->B.sync.group.offsets.enabled = true
sync.group.offsets.interval.seconds = 30
B.exactly.once.source.support = enabled
`)
	f, out, _ := factory()
	if err := RunCheck(&CheckOptions{File: mm2conf.LoadOptions{ConfigFile: p}, Output: "table"}, f); err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	for _, want := range []string{"topics 10s (MM2 10m)", "checkpoints 5s (MM2 1m)", "group-sync 30s", "exactly-once"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out.String(), "group-sync 30s (MM2") {
		t.Errorf("an interval the file sets is the same in both tools:\n%s", out)
	}
	f, out, _ = factory()
	if err := RunCheck(&CheckOptions{File: mm2conf.LoadOptions{ConfigFile: p}, Output: "json"}, f); err != nil {
		t.Fatal(err)
	}
	var rep mm2conf.CheckReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	var ab *mm2conf.CheckFlow
	for i := range rep.Flows {
		if rep.Flows[i].Name == "A->B" {
			ab = &rep.Flows[i]
		}
	}
	if ab == nil {
		t.Fatalf("no A->B in %s", out)
	}
	iv := ab.Intervals
	if iv.RefreshTopicsMs != 10000 || iv.EmitCheckpointsMs != 5000 || iv.SyncGroupOffsetsMs != 30000 {
		t.Errorf("intervals = %+v, want replicate's (10s topics, 5s checkpoints, 30s group sync)", iv)
	}
	if ab.MM2Intervals == nil || ab.MM2Intervals.RefreshTopicsMs != 600000 || ab.MM2Intervals.EmitCheckpointsMs != 60000 {
		t.Errorf("mm2_intervals = %+v, want MM2's (600 s, 60 s)", ab.MM2Intervals)
	}
	if !ab.Features.ExactlyOnce {
		t.Errorf("features.exactly_once false for an exactly-once flow")
	}
}
