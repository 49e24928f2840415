// Command wanlink runs the test bed's WAN links in the foreground until interrupted:
//
//	go run ./scripts/wanlink/cmd/wanlink -latency 50ms B        # B's PROXIED listener, 100 ms round trip
//	go run ./scripts/wanlink/cmd/wanlink -latency 25ms A B      # one link per cluster
//
// Clients then bootstrap on the cluster's base port + 8 (29100 for B at offset 0). The bed must
// be up (scripts/testbed.sh up); KMM_TESTBED_PORT_OFFSET selects the bed.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kmmproject/kmm/scripts/wanlink"
)

func main() {
	lat := flag.Duration("latency", 50*time.Millisecond, "latency added to each direction (round trip: twice this)")
	kbps := flag.Int64("bandwidth", 0, "bandwidth limit per direction in KB/s (0: none)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: wanlink [-latency 50ms] [-bandwidth KBps] CLUSTER...")
		os.Exit(2)
	}
	for _, c := range flag.Args() {
		l, err := wanlink.Start(c, *lat)
		if err != nil {
			fmt.Fprintln(os.Stderr, "wanlink:", err)
			os.Exit(1)
		}
		if err := l.SetBandwidth(*kbps); err != nil {
			fmt.Fprintln(os.Stderr, "wanlink:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %s -> %s, +%s each way\n", c, l.Listen, l.Upstream, *lat)
		defer l.Close()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
}
