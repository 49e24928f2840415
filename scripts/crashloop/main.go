// Command crashloop is scripts/crashloop.sh's helper: `crashloop FILE produce TOPIC N` creates
// TOPIC (4 partitions) on the flow's source and writes N records of 100 B; `crashloop FILE count
// TOPIC` prints how many records the remote topic holds on the target.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

func main() {
	ctx := context.Background()
	cfg, err := cmdutil.Load(mm2conf.LoadOptions{ConfigFile: os.Args[1]}, io.Discard)
	if err != nil {
		panic(err)
	}
	flows, _ := flow.FromMM2(cfg)
	var f *flow.Flow
	for _, x := range flows {
		if x.Enabled {
			f = x
		}
	}
	topic := os.Args[3]
	switch os.Args[2] {
	case "produce":
		src, err := rdkafka.Opener{}.Open(f, flow.Source)
		if err != nil {
			panic(err)
		}
		src.CreateTopics(ctx, []cluster.NewTopic{{Name: topic, Partitions: 4, RF: 1}})
		p, _ := src.NewProducer(map[string]string{"acks": "all", "linger.ms": "20"})
		n, _ := strconv.Atoi(os.Args[4])
		for lo := 0; lo < n; lo += 50000 {
			var b []cluster.Record
			for i := lo; i < lo+50000 && i < n; i++ {
				b = append(b, cluster.Record{Topic: topic, Partition: int32(i % 4), Value: make([]byte, 100)})
			}
			if _, err := p.ProduceSync(ctx, b); err != nil {
				panic(err)
			}
		}
		p.Close()
	case "count":
		tgt, err := rdkafka.Opener{}.Open(f, flow.Target)
		if err != nil {
			panic(err)
		}
		var tps []cluster.TP
		for i := 0; i < 4; i++ {
			tps = append(tps, cluster.TP{Topic: f.RemoteTopic(topic), Partition: int32(i)})
		}
		r, err := tgt.ListOffsets(ctx, tps, cluster.Latest)
		if err != nil {
			panic(err)
		}
		var s int64
		for _, x := range r {
			s += x.Offset
		}
		fmt.Println(s)
	}
}
