package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// When every offset sync of a partition is above the source log start (syncs dropped under load
// or compacted away), the records before the oldest one are paired by the log starts if the
// sync is the same distance from both, else they are counted as not compared: never silently
// left out of an OK.
func TestStartBeforeTheOldestSync(t *testing.T) {
	tp := cluster.TP{Topic: "orders", Partition: 4}
	for _, c := range []struct {
		name             string
		sync             offsetsync.Sync
		tgtStart         int64
		srcFrom, tgtFrom int64
		unpaired         int64
	}{
		{"same distance from both starts", offsetsync.Sync{Upstream: 7705, Downstream: 7705}, 0, 0, 0, 0},
		{"same distance, shifted target", offsetsync.Sync{Upstream: 7705, Downstream: 8705}, 1000, 0, 1000, 0},
		{"distances differ", offsetsync.Sync{Upstream: 7705, Downstream: 7000}, 0, 7705, 7000, 7705},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := offsetsync.NewStore(offsetsync.Options{})
			st.Add(offsetsync.TP{Topic: tp.Topic, Partition: tp.Partition}, c.sync, time.Now())
			s := &state{syncs: st}
			p := &part{tp: tp, remote: cluster.TP{Topic: "A.orders", Partition: 4}, srcStart: 0, srcEnd: 25000, tgtStart: c.tgtStart, tgtEnd: 25000 + c.tgtStart, stored: 24999}
			j, ok := s.start(p)
			if !ok || j.srcFrom != c.srcFrom || j.tgtFrom != c.tgtFrom || j.unpaired != c.unpaired {
				t.Fatalf("start = %+v (ok %v), want from %d->%d, %d unpaired", j, ok, c.srcFrom, c.tgtFrom, c.unpaired)
			}
			if c.unpaired == 0 && !strings.Contains(j.why, "log starts paired") {
				t.Errorf("why %q", j.why)
			}
		})
	}
}
