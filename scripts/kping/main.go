// Command kping asks one Kafka bootstrap server for cluster metadata and prints the cluster id
// and broker count. The test bed uses it to decide that a cluster is ready. It exits 1 when the
// cluster does not answer within 3 seconds. With -warm it also makes the cluster create its
// lazily created internal topics (__consumer_offsets, __transaction_state) by writing one
// idempotent record and committing one group offset, so the first test does not wait for them.
// It is a test-bed tool, not part of kmm.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	args := os.Args[1:]
	warm := len(args) == 2 && args[0] == "-warm"
	if warm {
		args = args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: kping [-warm] HOST:PORT")
		os.Exit(2)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(args[0]), kgo.DialTimeout(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil || len(md.Brokers) == 0 {
		fmt.Fprintln(os.Stderr, "no metadata:", err)
		os.Exit(1)
	}
	if warm {
		if err := warmUp(adm, cl); err != nil {
			fmt.Fprintln(os.Stderr, "warm-up:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("cluster_id=%s brokers=%d\n", md.Cluster, len(md.Brokers))
}

func warmUp(adm *kadm.Client, cl *kgo.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const topic, group = "kmm-testbed-warmup", "kmm-testbed-warmup"
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		if _, err2 := adm.ListEndOffsets(ctx, topic); err2 != nil {
			return err
		}
	}
	for {
		// The idempotent producer's InitProducerId creates __transaction_state.
		err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("warm")}).FirstErr()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	for {
		// The first offset commit creates __consumer_offsets.
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: 1, LeaderEpoch: -1})
		resp, err := adm.CommitOffsets(ctx, group, offs)
		if err == nil && resp.Error() == nil {
			return nil
		}
		if ctx.Err() != nil {
			if err == nil {
				err = resp.Error()
			}
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
