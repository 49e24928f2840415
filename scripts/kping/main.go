// Command kping asks one Kafka bootstrap server for cluster metadata and prints the cluster id
// and broker count. The test bed uses it to decide that a cluster is ready. It exits 1 when the
// cluster does not answer within 3 seconds. It is a test-bed tool, not part of kmm.
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
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kping HOST:PORT")
		os.Exit(2)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(os.Args[1]), kgo.DialTimeout(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil || len(md.Brokers) == 0 {
		fmt.Fprintln(os.Stderr, "no metadata:", err)
		os.Exit(1)
	}
	fmt.Printf("cluster_id=%s brokers=%d\n", md.Cluster, len(md.Brokers))
}
