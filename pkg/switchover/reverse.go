package switchover

import (
	"context"
	"fmt"
	"sort"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/plan"
)

// KindStoreReverse stores the reverse flow's (T->S) resume positions at T's ends in MM2's
// Connect offsets topic on S (mm2-offsets.<T>.internal, the key MM2's MirrorSourceConnector and
// kmm replicate read), so that a reverse replicator copies only what T receives after the cut.
const KindStoreReverse = "store-reverse-progress"

// ReverseTPs returns the partitions on cluster b (the reverse flow's source) that the reverse
// flow rev would copy (its topic filter, heartbeats, no internal topics, no cycles), sorted.
func ReverseTPs(ctx context.Context, rev *flow.Flow, b cluster.Admin) ([]cluster.TP, error) {
	ts, err := b.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	var tps []cluster.TP
	for t, info := range ts {
		if t == plan.StateTopic || !rev.Selected(t) {
			continue
		}
		for p := 0; p < info.Partitions; p++ {
			tps = append(tps, cluster.TP{Topic: t, Partition: int32(p)})
		}
	}
	sortTPs(tps)
	return tps, nil
}

func sortTPs(tps []cluster.TP) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}

// ReverseEnds reads the end offsets of the partitions the reverse flow would copy from b.
func ReverseEnds(ctx context.Context, rev *flow.Flow, b cluster.Cluster) ([]flowstate.TopicEnd, error) {
	tps, err := ReverseTPs(ctx, rev, b)
	if err != nil || len(tps) == 0 {
		return nil, err
	}
	res, err := b.ListOffsets(ctx, tps, cluster.Latest)
	if err != nil {
		// A topic deleted since it was listed fails the whole request: read topic by topic and
		// leave out the topics that are gone.
		if res, err = endsByTopic(ctx, b, tps); err != nil {
			return nil, fmt.Errorf("reading the end offsets of %s: %w", b.Alias(), err)
		}
	}
	out := make([]flowstate.TopicEnd, 0, len(tps))
	for _, tp := range tps {
		if r, ok := res[tp]; ok {
			out = append(out, flowstate.TopicEnd{Topic: tp.Topic, Partition: tp.Partition, End: r.Offset})
		}
	}
	return out, nil
}

func endsByTopic(ctx context.Context, b cluster.Cluster, tps []cluster.TP) (map[cluster.TP]cluster.OffsetResult, error) {
	byTopic := map[string][]cluster.TP{}
	var order []string
	for _, tp := range tps {
		if byTopic[tp.Topic] == nil {
			order = append(order, tp.Topic)
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp)
	}
	out := map[cluster.TP]cluster.OffsetResult{}
	for _, t := range order {
		res, err := b.ListOffsets(ctx, byTopic[t], cluster.Latest)
		if err != nil {
			ts, lerr := b.ListTopics(ctx)
			if lerr != nil {
				return nil, err
			}
			if _, ok := ts[t]; !ok {
				continue // deleted meanwhile: nothing to copy
			}
			return nil, err
		}
		for tp, r := range res {
			out[tp] = r
		}
	}
	return out, nil
}

// ReverseProgress stores and checks the reverse flow's resume positions on its target.
type ReverseProgress struct {
	Rev *flow.Flow      // the reverse flow T->S (its target is the cluster written)
	On  cluster.Cluster // the reverse flow's target (S of the failed-over flow)
}

// Missing returns the ends whose stored position on the reverse flow's target is behind them
// (absent, or a last replicated offset below end-1). A position at or past the end is left
// alone: a reverse replicator that already ran is never moved back.
func (r ReverseProgress) Missing(ctx context.Context, ends []flowstate.TopicEnd) ([]flowstate.TopicEnd, error) {
	stored, err := mm2read.ReadSourcePositions(ctx, r.On, r.Rev.OffsetsTopic, r.Rev.SourceAlias)
	if err != nil {
		return nil, fmt.Errorf("reading %s on %s: %w", r.Rev.OffsetsTopic, r.On.Alias(), err)
	}
	var out []flowstate.TopicEnd
	for _, e := range ends {
		if e.End <= 0 {
			continue // nothing to skip: the reverse flow starts at the beginning anyway
		}
		if s, ok := stored[cluster.TP{Topic: e.Topic, Partition: e.Partition}]; !ok || s < e.End-1 {
			out = append(out, e)
		}
	}
	return out, nil
}

// Store writes the positions of ends (each end-1: MM2 stores the last replicated offset and
// resumes after it) to the reverse flow's Connect offsets topic, creating the topic as MM2 would
// when it is missing; records are partitioned with Java's murmur2 like Connect's producer.
func (r ReverseProgress) Store(ctx context.Context, ends []flowstate.TopicEnd) (int64, error) {
	if len(ends) == 0 {
		return 0, nil
	}
	rev := r.Rev
	if _, err := cluster.EnsureTopic(ctx, r.On, cluster.NewTopic{Name: rev.OffsetsTopic, Partitions: rev.OffsetsTopicPartitions, RF: rev.OffsetsTopicRF,
		Configs: map[string]string{"cleanup.policy": "compact"}}, rev.Target+".offset.storage.replication.factor"); err != nil {
		return 0, err
	}
	ts, err := r.On.ListTopics(ctx)
	if err != nil {
		return 0, err
	}
	n := int32(ts[rev.OffsetsTopic].Partitions)
	if n <= 0 {
		return 0, fmt.Errorf("topic %s on %s has no partitions", rev.OffsetsTopic, r.On.Alias())
	}
	recs := make([]cluster.Record, 0, len(ends))
	for _, e := range ends {
		key := mm2wire.SourceOffsetKey{Connector: mm2wire.SourceConnectorName, Cluster: rev.SourceAlias, Topic: e.Topic, Partition: e.Partition}.AppendJSON(nil)
		recs = append(recs, cluster.Record{Topic: rev.OffsetsTopic, Partition: mm2wire.PartitionForKey(key, n), Key: key, Value: mm2wire.AppendOffsetValue(nil, e.End-1)})
	}
	prod, err := r.On.NewProducer(map[string]string{"acks": "all", "enable.idempotence": "true"})
	if err != nil {
		return 0, err
	}
	defer prod.Close()
	if _, err := prod.ProduceSync(ctx, recs); err != nil {
		return 0, fmt.Errorf("writing %s on %s: %w", rev.OffsetsTopic, r.On.Alias(), err)
	}
	return int64(len(recs)), nil
}

type storeReverse struct{ fo *Failover }

func (a storeReverse) rp() ReverseProgress {
	return ReverseProgress{Rev: a.fo.Opt.Reverse, On: a.fo.Src}
}

func (a storeReverse) Check(ctx context.Context, _ plan.Step) (bool, error) {
	ends, err := a.fo.reverseEnds(ctx)
	if err != nil {
		return false, err
	}
	miss, err := a.rp().Missing(ctx, ends)
	return len(miss) == 0, err
}

func (a storeReverse) Apply(ctx context.Context, _ plan.Step) (map[string]int64, error) {
	ends, err := a.fo.reverseEnds(ctx)
	if err != nil {
		return nil, err
	}
	miss, err := a.rp().Missing(ctx, ends)
	if err != nil {
		return nil, err
	}
	n, err := a.rp().Store(ctx, miss)
	if err != nil {
		return nil, err
	}
	var skipped int64
	for _, e := range ends {
		skipped += e.End
	}
	return map[string]int64{"partitions": int64(len(ends)), "positions_written": n, "records_before_cut": skipped}, nil
}

// reverseEnds are T's ends of the reverse flow's partitions at the cut, read once per run
// (after the replicators stopped, so the remote topics are final).
func (fo *Failover) reverseEnds(ctx context.Context) ([]flowstate.TopicEnd, error) {
	fo.mu.Lock()
	defer fo.mu.Unlock()
	if fo.revEnds != nil || fo.Opt.Reverse == nil {
		return fo.revEnds, nil
	}
	ends, err := ReverseEnds(ctx, fo.Opt.Reverse, fo.Tgt)
	if err != nil {
		return nil, err
	}
	if ends == nil {
		ends = []flowstate.TopicEnd{}
	}
	fo.revEnds = ends
	return ends, nil
}
