package plan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
)

// StateTopic is kmm's state topic on a flow's target cluster: one partition, compacted, keys
// "run/<command>/<S>-><T>" (the current run of a plan) and "flow/<S>-><T>" (reserved for a flow's
// state), JSON values with a format version. Its name starts with "__", so MM2's default topic
// filters and every replication policy's internal-topic rule keep it from being replicated.
const StateTopic = "__kmm_state"

// TopicJournal is the Journal kept in StateTopic on cluster C. The topic is created on the first
// Save with replication factor RF (RFKey names the setting, for the hint when the cluster has
// fewer brokers).
type TopicJournal struct {
	C     cluster.Cluster
	RF    int
	RFKey string
	Now   func() time.Time

	prod    cluster.Producer
	created bool
}

// Where implements Journal.
func (j *TopicJournal) Where() string { return StateTopic + " on cluster " + j.C.Alias() }

// Load implements Journal: it reads the topic to its end and decodes the newest value of key (a
// tombstone deletes it). A missing topic holds no runs.
func (j *TopicJournal) Load(ctx context.Context, key string) (*Run, error) {
	recs, err := ReadState(ctx, j.C)
	if err != nil {
		return nil, err
	}
	v, ok := recs[key]
	if !ok || v == nil {
		return nil, nil
	}
	return DecodeRun(v)
}

// ReadState reads every key of c's state topic with its newest value (nil for a tombstone);
// an empty map when the topic does not exist.
func ReadState(ctx context.Context, c cluster.Cluster) (map[string][]byte, error) {
	out := map[string][]byte{}
	r, err := cluster.OpenPartition(ctx, c, StateTopic, 0)
	if errors.Is(err, cluster.ErrNoTopic) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for {
		rec, ok, err := r.Next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out[string(rec.Key)] = rec.Value
	}
}

// Save implements Journal.
func (j *TopicJournal) Save(ctx context.Context, key string, r *Run) error {
	v, err := EncodeRun(r)
	if err != nil {
		return err
	}
	if !j.created {
		if _, err := cluster.EnsureTopic(ctx, j.C, cluster.NewTopic{Name: StateTopic, Partitions: 1, RF: j.RF,
			Configs: map[string]string{"cleanup.policy": "compact"}}, j.RFKey); err != nil {
			return err
		}
		j.created = true
	}
	if j.prod == nil {
		if j.prod, err = j.C.NewProducer(map[string]string{"acks": "all", "enable.idempotence": "true"}); err != nil {
			return err
		}
	}
	now := time.Now()
	if j.Now != nil {
		now = j.Now()
	}
	if _, err := j.prod.ProduceSync(ctx, []cluster.Record{{Topic: StateTopic, Partition: 0, Key: []byte(key), Value: v, Timestamp: now}}); err != nil {
		return fmt.Errorf("writing %s to %s: %w", key, j.Where(), err)
	}
	return nil
}

// Close releases the journal's producer.
func (j *TopicJournal) Close() {
	if j.prod != nil {
		j.prod.Close()
		j.prod = nil
	}
}
