// Package kfakebed runs in-process Kafka clusters (franz-go's kfake, the real protocol) for fast
// tests of kmm's logic through its real client code: pkg/rdkafka (librdkafka) talks to them as
// to brokers. Clusters start in milliseconds and close with the test. Test support only: the
// layering check keeps kfake out of the kmm binary.
//
// librdkafka works against kfake for what kmm uses (metadata, create/delete topics and
// partitions, describe/alter configs, ACLs, list offsets, delete records, idempotent produce,
// fetch, list/describe groups, list/alter group offsets); kfake has no __consumer_offsets topic
// to read, so what depends on it stays on the real bed.
package kfakebed

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/policy"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Cluster is one in-process cluster with its MM2 alias.
type Cluster struct {
	Name      string
	Bootstrap string
	*kfake.Cluster
}

// Start starts a one-broker cluster named alias (closed at the end of the test).
func Start(t testing.TB, alias string, opts ...kfake.Opt) Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return Cluster{Name: alias, Bootstrap: c.ListenAddrs()[0], Cluster: c}
}

// Config is the librdkafka settings for the cluster (no telemetry push: kfake answers it, but
// librdkafka logs each subscription change).
func (c Cluster) Config() map[string]string {
	return map[string]string{"bootstrap.servers": c.Bootstrap, "enable.metrics.push": "false"}
}

// Open returns the cluster as kmm's commands see it, closed at the end of the test.
func (c Cluster) Open(t testing.TB) *rdkafka.Cluster {
	t.Helper()
	cl, err := rdkafka.NewCluster(c.Name, c.Bootstrap, c.Config(), c.Config(), c.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Opener opens the sides of flows with librdkafka and each flow's settings (as kmm does).
func Opener() cluster.Opener { return rdkafka.Opener{} }

// PingWithin is Opener with every cluster's Ping bounded by d instead of the caller's bound
// (kmm's commands wait 10 s for a cluster to answer): for tests of a cluster that is down,
// which would otherwise wait the whole production bound for nothing. Everything else is the
// librdkafka cluster as kmm opens it.
func PingWithin(d time.Duration) cluster.Opener {
	return cluster.OpenerFunc(func(f *flow.Flow, side flow.Side) (cluster.Cluster, error) {
		c, err := rdkafka.Opener{}.Open(f, side)
		if err != nil {
			return nil, err
		}
		return pingWithin{Cluster: c, d: d}, nil
	})
}

type pingWithin struct {
	cluster.Cluster
	d time.Duration
}

func (p pingWithin) Ping(ctx context.Context, timeout time.Duration) (string, error) {
	return p.Cluster.Ping(ctx, min(timeout, p.d))
}

// Flow builds a validated flow src->tgt replicating the topics matching re (Go regex, full
// match) with the default policy, replication factor 1 and fast intervals.
func Flow(src, tgt Cluster, re string) *flow.Flow {
	rx := regexp.MustCompile("^(?:" + re + ")$")
	f := &flow.Flow{
		Source: src.Name, Target: tgt.Name, SourceBootstrap: src.Bootstrap, TargetBootstrap: tgt.Bootstrap, Enabled: true,
		SourceConsumer: src.Config(), SourceAdmin: src.Config(), SourceProducer: src.Config(),
		TargetProducer: merge(tgt.Config(), map[string]string{"linger.ms": "5"}), TargetAdmin: tgt.Config(), TargetConsumer: tgt.Config(),
		Policy: policy.NewDefault(".", false, true), TopicFilter: rx.MatchString,
		ReplicationFactor: 1, RefreshTopics: true, RefreshTopicsInterval: 500 * time.Millisecond,
		EmitOffsetSyncs: true, OffsetLagMax: 100, OffsetSyncsRF: 1, CheckpointsRF: 1, HeartbeatsRF: 1,
		OffsetsTopicRF: 1, OffsetsTopicPartitions: 5, OffsetFlushInterval: 200 * time.Millisecond, Tasks: 2,
	}
	if err := f.Validate(); err != nil {
		panic(err)
	}
	return f
}

func merge(a, b map[string]string) map[string]string {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// CreateTopic creates a topic through kmm's admin client.
func (c Cluster) CreateTopic(t testing.TB, name string, partitions int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cluster.EnsureTopic(ctx, c.Open(t), cluster.NewTopic{Name: name, Partitions: partitions, RF: 1}, ""); err != nil {
		t.Fatal(err)
	}
}

// Produce writes records with an idempotent producer and returns their offsets.
func (c Cluster) Produce(t testing.TB, recs []cluster.Record) []int64 {
	t.Helper()
	p, err := rdkafka.NewProducer("kfake "+c.Name, merge(c.Config(), map[string]string{"enable.idempotence": "true", "acks": "all", "linger.ms": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offs, err := p.ProduceSync(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	return offs
}

// ReadAll reads every record of topic's partitions from the start up to their end offsets (one
// reader for all partitions), in offset order per partition.
func (c Cluster) ReadAll(t testing.TB, topic string) []cluster.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := c.Open(t)
	ts, err := cl.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tps []cluster.TP
	for p := 0; p < ts[topic].Partitions; p++ {
		tps = append(tps, cluster.TP{Topic: topic, Partition: int32(p)})
	}
	if len(tps) == 0 {
		return nil
	}
	ends, err := cl.ListOffsets(ctx, tps, cluster.Latest)
	if err != nil {
		t.Fatal(err)
	}
	start, left := map[cluster.TP]int64{}, 0
	for _, tp := range tps {
		if ends[tp].Offset > 0 {
			start[tp] = int64(cluster.Earliest)
			left++
		}
	}
	var out []cluster.Record
	if left == 0 {
		return out
	}
	r, err := cl.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Assign(start); err != nil {
		t.Fatal(err)
	}
	for left > 0 {
		recs, err := r.Poll(ctx, 10000, 200*time.Millisecond)
		if err != nil {
			t.Fatalf("reading %s: %v", topic, err)
		}
		for _, rec := range recs {
			tp := cluster.TP{Topic: rec.Topic, Partition: rec.Partition}
			if rec.Offset >= ends[tp].Offset {
				continue
			}
			out = append(out, rec)
			if rec.Offset == ends[tp].Offset-1 {
				left--
			}
		}
	}
	return out
}

// WriteProps writes an MM2 properties file naming clusters (their aliases and bootstraps), with
// replication factors of 1 and fast intervals, followed by lines; it returns its path.
func WriteProps(t testing.TB, clusters []Cluster, lines ...string) string {
	t.Helper()
	var aliases []string
	base := []string{}
	for _, c := range clusters {
		aliases = append(aliases, c.Name)
		base = append(base, c.Name+".bootstrap.servers = "+c.Bootstrap, c.Name+".offset.storage.replication.factor = 1",
			c.Name+".offset.storage.partitions = 5", c.Name+".offset.flush.interval.ms = 200")
	}
	base = append([]string{"clusters = " + strings.Join(aliases, ", ")}, base...)
	base = append(base, "replication.factor = 1", "checkpoints.topic.replication.factor = 1", "heartbeats.topic.replication.factor = 1",
		"offset-syncs.topic.replication.factor = 1", "refresh.topics.interval.seconds = 1")
	p := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(p, []byte(strings.Join(append(base, lines...), "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Down is a cluster alias with a bootstrap where nothing listens (a closed loopback port).
func Down(t testing.TB, alias string) Cluster {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return Cluster{Name: alias, Bootstrap: addr}
}

// Records returns a function reporting how many records topic holds (the sum of its partitions'
// end offsets), with one admin client for all calls: cheap enough to poll.
func (c Cluster) Records(t testing.TB, topic string) func() int64 {
	t.Helper()
	cl := c.Open(t)
	return func() int64 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ts, err := cl.ListTopics(ctx)
		if err != nil || ts[topic].Partitions == 0 {
			return 0
		}
		var tps []cluster.TP
		for p := 0; p < ts[topic].Partitions; p++ {
			tps = append(tps, cluster.TP{Topic: topic, Partition: int32(p)})
		}
		ends, err := cl.ListOffsets(ctx, tps, cluster.Latest)
		if err != nil {
			return 0
		}
		var n int64
		for _, e := range ends {
			n += e.Offset
		}
		return n
	}
}
