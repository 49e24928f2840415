package replicator

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/kmmproject/kmm/pkg/flow"
)

// onAckRun (the C data plane's runs) queues exactly the offset syncs, and leaves exactly the
// delayed sync, that one onAck per record would: for offset.lag.max 0, 1, 100 and Long.MAX, runs
// of every length, gaps in source offsets and a target that went back.
func TestOnAckRunMatchesPerRecord(t *testing.T) {
	for _, lagMax := range []int64{0, 1, 7, 100, math.MaxInt64} {
		t.Run(fmt.Sprint(lagMax), func(t *testing.T) {
			rng := rand.New(rand.NewSource(lagMax % 1000))
			mk := func() (*syncWriter, *pstate) {
				e := &engine{flow: &flow.Flow{OffsetLagMax: lagMax}}
				w := &syncWriter{e: e, pending: map[*pstate][][2]int64{}, wake: make(chan struct{}, 1)}
				return w, newPState("t", "t", 0)
			}
			wr, pr := mk() // per record
			wb, pb := mk() // per run
			up, down := int64(rng.Intn(50)), int64(0)
			checked := 0 // syncs compared so far
			for i := 0; i < 2000; i++ {
				n := int64(1 + rng.Intn(300))
				switch rng.Intn(10) {
				case 0:
					up += int64(1 + rng.Intn(20)) // a gap (compaction, markers)
				case 1:
					down = max(down-int64(rng.Intn(5)), 0) // the target went back
				}
				for k := int64(0); k < n; k++ {
					wr.onAck(pr, up+k, down+k)
				}
				wb.onAckRun(pb, up, down, up+n-1, down+n-1)
				up, down = up+n, down+n
				if r, b := wr.pending[pr], wb.pending[pb]; len(r) != len(b) || !reflect.DeepEqual(r[checked:], b[checked:]) {
					t.Fatalf("run %d: syncs per record %v, per run %v", i, tail(r), tail(b))
				}
				checked = len(wr.pending[pr])
				if pr.hasDelayed != pb.hasDelayed || (pr.hasDelayed && (pr.delayedUp != pb.delayedUp || pr.delayedDown != pb.delayedDown)) ||
					pr.lastSyncDown != pb.lastSyncDown || pr.prevUp != pb.prevUp || pr.prevDown != pb.prevDown {
					t.Fatalf("run %d: state per record %v, per run %v", i, state(pr), state(pb))
				}
			}
			if lagMax == 100 && len(wr.pending[pr]) < 1000 {
				t.Fatalf("only %d syncs: the test did not exercise the lag rule", len(wr.pending[pr]))
			}
		})
	}
}

func tail(s [][2]int64) [][2]int64 { return s[max(len(s)-3, 0):] }

func state(p *pstate) []any {
	return []any{p.prevUp, p.prevDown, p.lastSyncDown, p.hasDelayed, p.delayedUp, p.delayedDown}
}
