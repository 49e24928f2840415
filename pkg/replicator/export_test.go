package replicator

import (
	"context"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// SlowCheckpointRead makes the checkpointer's start-up read of the offset-syncs topic take d
// longer (as on a cluster where that topic is long); the returned func undoes it.
func SlowCheckpointRead(d time.Duration) func() {
	old := loadOffsetSyncs
	loadOffsetSyncs = func(ctx context.Context, c cluster.Cluster, topic string, s *offsetsync.Store) (offsetsync.LoadStats, error) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return offsetsync.LoadStats{LastOffset: -1}, ctx.Err()
		}
		return old(ctx, c, topic, s)
	}
	return func() { loadOffsetSyncs = old }
}
