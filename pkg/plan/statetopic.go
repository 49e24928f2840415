package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
)

// StateTopic is kmm's state topic on a flow's target cluster: one partition, compacted, keys
// "run/<command>/<S>-><T>" (the current run of a plan) and "flow/<S>-><T>" (reserved for a flow's
// state), JSON values with a format version. Its name starts with "__", so MM2's default topic
// filters and every replication policy's internal-topic rule keep it from being replicated.
const StateTopic = "__kmm_state"

// StateMaxBytes is the largest batch StateTopic takes (its max.message.bytes when kmm creates
// it) and the largest record kmm's writers of it produce: a flow's state holds a line per
// source partition (FAILED_OVER's cut, the replicator's ends), ~1.5 MB of JSON at 10,000
// partitions, above the broker's 1 MiB default.
const StateMaxBytes = 16 << 20

// StateTopicConfigs are the configs kmm creates StateTopic with: compacted, batches up to
// StateMaxBytes.
func StateTopicConfigs() map[string]string {
	return map[string]string{"cleanup.policy": "compact", "max.message.bytes": strconv.Itoa(StateMaxBytes)}
}

// StateProducer is the producer settings of every writer of StateTopic: idempotent with
// acks=all, compressed (the JSON of a 10,000-partition cut shrinks ~10x, so a topic created
// with the broker's 1 MiB default, before StateTopicConfigs, still takes it) and records up to
// StateMaxBytes.
func StateProducer() map[string]string {
	return map[string]string{"acks": "all", "enable.idempotence": "true", "compression.type": "zstd",
		"message.max.bytes": strconv.Itoa(StateMaxBytes)}
}

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
	last    map[string][]byte // chunk records as this journal last wrote them
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
	return RunFrom(recs, key)
}

// RunFrom decodes the run under key from the state topic's records (ReadState), its step
// chunks included; nil when there is none.
func RunFrom(recs map[string][]byte, key string) (*Run, error) {
	v, ok := recs[key]
	if !ok || v == nil {
		return nil, nil
	}
	r, err := DecodeRun(v)
	if err != nil || r.StepChunks == 0 {
		return r, err
	}
	// The steps are in chunk records, written before (or with) the run record. A chunk that is
	// missing or of another run (a crash while a new run's first save was being written) leaves
	// its steps out: the executor then checks them on the cluster instead of trusting them.
	for i := 0; i < r.StepChunks; i++ {
		cv := recs[ChunkKey(key, i)]
		if cv == nil {
			continue
		}
		var c stepChunk
		if err := json.Unmarshal(cv, &c); err != nil {
			return nil, fmt.Errorf("run record %s: steps chunk %d: %w", key, i, err)
		}
		if c.Version > FormatVersion {
			return nil, fmt.Errorf("run record %s: steps chunk of format version %d (this kmm reads version %d)", key, c.Version, FormatVersion)
		}
		if c.Type == "run-steps" && c.RunID == r.ID && c.Index == i {
			r.Steps = append(r.Steps, c.Steps...)
		}
	}
	return r, nil
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

// Save implements Journal. A run of more than JournalChunk steps is written as a run record
// without steps plus chunk records of its steps, and only the chunks that changed since this
// journal's last save are written again.
func (j *TopicJournal) Save(ctx context.Context, key string, r *Run) error {
	var recs []cluster.Record
	written := map[string][]byte{}
	hdr := *r
	hdr.StepChunks = 0
	if len(r.Steps) > JournalChunk {
		hdr.Steps = nil
		for i := 0; i*JournalChunk < len(r.Steps); i++ {
			steps := r.Steps[i*JournalChunk : min((i+1)*JournalChunk, len(r.Steps))]
			cv, err := json.Marshal(stepChunk{Version: FormatVersion, Type: "run-steps", RunID: r.ID, Index: i, Steps: steps})
			if err != nil {
				return err
			}
			ck := ChunkKey(key, i)
			if !bytes.Equal(j.last[ck], cv) {
				recs = append(recs, cluster.Record{Topic: StateTopic, Partition: 0, Key: []byte(ck), Value: cv})
				written[ck] = cv
			}
			hdr.StepChunks = i + 1
		}
	}
	v, err := EncodeRun(&hdr)
	if err != nil {
		return err
	}
	r.Version, r.Type = hdr.Version, hdr.Type
	if !j.created {
		if _, err := cluster.EnsureTopic(ctx, j.C, cluster.NewTopic{Name: StateTopic, Partitions: 1, RF: j.RF,
			Configs: StateTopicConfigs()}, j.RFKey); err != nil {
			return err
		}
		j.created = true
	}
	if j.prod == nil {
		if j.prod, err = j.C.NewProducer(StateProducer()); err != nil {
			return err
		}
	}
	now := time.Now()
	if j.Now != nil {
		now = j.Now()
	}
	recs = append(recs, cluster.Record{Topic: StateTopic, Partition: 0, Key: []byte(key), Value: v})
	for i := range recs {
		recs[i].Timestamp = now
	}
	if _, err := j.prod.ProduceSync(ctx, recs); err != nil {
		return fmt.Errorf("writing %s to %s: %w", key, j.Where(), err)
	}
	if j.last == nil {
		j.last = map[string][]byte{}
	}
	for k, cv := range written {
		j.last[k] = cv
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
