package switchover

import (
	"testing"

	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// Under a policy that keeps topic names the stranded records end where the reverse flow's first
// write after the cut is; the syncs of an earlier failback's reverse copy (below the cut) do not
// end them: with those taken, a second emergency failover's failback counted 0 stranded records
// and the groups skipped them (TestRunbook's outage after its planned drill).
func TestStrandedEnd(t *testing.T) {
	earlier := []offsetsync.Sync{{Upstream: 430, Downstream: 432}, {Upstream: 900, Downstream: 902}} // a first failback's copies
	for _, c := range []struct {
		name       string
		syncs      []offsetsync.Sync
		from, end  int64
		want       int64
		wantRecord int64
	}{
		{"no reverse write yet", nil, 8685, 8835, 8835, 150},
		{"only an earlier failback's syncs", earlier, 8685, 8835, 8835, 150},
		{"this cut's reverse copy after the stranded records", append(earlier, offsetsync.Sync{Upstream: 8068, Downstream: 8835}, offsetsync.Sync{Upstream: 8200, Downstream: 8967}), 8685, 9100, 8835, 150},
		{"a reverse write at the cut: nothing stranded", append(earlier, offsetsync.Sync{Upstream: 8068, Downstream: 8685}), 8685, 9000, 8685, 0},
		{"a sync past the end (not possible, bounded)", []offsetsync.Sync{{Upstream: 1, Downstream: 9999}}, 8685, 8835, 8835, 150},
	} {
		got := strandedEnd(c.syncs, c.from, c.end)
		if got != c.want || got-c.from != c.wantRecord {
			t.Errorf("%s: end %d (%d stranded), want %d (%d)", c.name, got, got-c.from, c.want, c.wantRecord)
		}
	}
}
