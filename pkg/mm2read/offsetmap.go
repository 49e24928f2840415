package mm2read

import (
	"context"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/offsetmap"
)

// ReadOffsetMaps reads kmm's offset-map topic (offsetmap.Topic, partition 0, compacted) on c to
// its end and returns the newest map of each source partition (a null value deletes one; a
// record that does not decode is skipped). A missing topic is ErrNoTopic (wrapped).
func ReadOffsetMaps(ctx context.Context, c cluster.Cluster, topic string) (map[cluster.TP]*offsetmap.Map, error) {
	r, err := cluster.OpenPartition(ctx, c, topic, 0)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := map[cluster.TP]*offsetmap.Map{}
	for {
		rec, ok, err := r.Next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		t, p, err := offsetmap.ParseKey(rec.Key)
		if err != nil {
			continue
		}
		tp := cluster.TP{Topic: t, Partition: p}
		if rec.Value == nil {
			delete(out, tp)
			continue
		}
		if m, err := offsetmap.Decode(rec.Value); err == nil {
			out[tp] = m
		}
	}
}
