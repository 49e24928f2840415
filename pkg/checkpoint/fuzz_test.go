package checkpoint

import (
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// FuzzTrackerMonotonic drives a Tracker with syncs (forward and rewinding), group commits
// (forward and rewinding) and recomputations, writes whatever it emits, and checks MM2's
// contract on the checkpoints topic: per group and partition, a checkpoint's downstream offset
// never moves backwards unless its upstream offset did; every emitted checkpoint carries the
// group's committed offset and metadata and the mapping's translation of it; nothing is
// emitted for an offset the mapping cannot translate.
func FuzzTrackerMonotonic(f *testing.F) {
	f.Add([]byte{0, 0, 2, 0, 2, 1, 3, 0, 2, 4, 5, 2, 3})
	f.Add([]byte{0, 10, 0, 20, 2, 5, 1, 3, 2, 0, 3, 4, 0, 7, 2, 9})
	f.Fuzz(func(t *testing.T, ops []byte) {
		tps := []TP{{Topic: "t"}, {Topic: "t", Partition: 1}}
		m := offsetsync.NewStore(offsetsync.Options{MaxEntries: offsetsync.MinMaxEntries})
		m.MarkLoaded()
		tr := NewTracker(cfg("A", "B"), m, loadedStore())
		heads := map[TP]offsetsync.Sync{}
		written := map[string]mm2wire.Checkpoint{}
		commits := map[string]SourceOffset{}
		check := func(ds []Decision) {
			var emit []mm2wire.Checkpoint
			for _, d := range ds {
				if d.Outcome != Emit {
					continue
				}
				cp := d.Checkpoint
				key := cp.Group + "/" + cp.Topic + "/" + string(rune('0'+cp.Partition))
				if prev, ok := written[key]; ok && !(cp.UpstreamOffset < prev.UpstreamOffset || cp.DownstreamOffset > prev.DownstreamOffset) {
					t.Fatalf("%s: emitted %+v after %+v", key, cp, prev)
				}
				c := commits[d.Group+"/"+string(rune('0'+d.Source.Partition))]
				if cp.UpstreamOffset != c.Offset || cp.Metadata != c.Metadata || cp.Topic != "A.t" {
					t.Fatalf("emitted %+v for commit %+v", cp, c)
				}
				if now := m.Translate(d.Source.TP(), cp.UpstreamOffset); now.Status != offsetsync.Translated || now.Downstream != cp.DownstreamOffset {
					t.Fatalf("emitted %+v, mapping says %+v", cp, now)
				}
				written[key] = cp
				emit = append(emit, cp)
			}
			tr.Written(emit, time.Time{})
		}
		for i := 0; i+1 < len(ops) && i < 400; i += 2 {
			op, arg := ops[i]%5, int64(ops[i+1])
			tp := tps[arg%2]
			switch op {
			case 0: // forward sync
				h := heads[tp]
				s := offsetsync.Sync{Upstream: h.Upstream + 1 + arg%17, Downstream: h.Downstream + 1 + arg%5}
				if _, ok := heads[tp]; !ok {
					s = offsetsync.Sync{Upstream: arg % 7, Downstream: arg % 3}
				}
				heads[tp] = s
				_, ds := tr.AddSync(tp, s, time.Time{})
				check(ds)
			case 1: // rewinding sync
				s := offsetsync.Sync{Upstream: arg % 40, Downstream: heads[tp].Downstream + 1 + arg%3}
				heads[tp] = s
				_, ds := tr.AddSync(tp, s, time.Time{})
				check(ds)
			case 2, 3: // a group commits
				g := []string{"g1", "g2"}[arg%2]
				o := SourceOffset{Topic: "t", Partition: tp.Partition, Offset: arg % 60, Metadata: string(rune('a' + arg%3))}
				commits[g+"/"+string(rune('0'+o.Partition))] = o
				check(tr.UpdateOffsets(g, []SourceOffset{o}))
			case 4:
				check(tr.Recompute())
			}
		}
	})
}
