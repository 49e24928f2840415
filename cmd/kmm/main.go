// Command kmm is a failover-focused toolkit for Kafka cross-cluster replication that reads
// MirrorMaker 2 properties files. main only wires the process to pkg/app.
package main

import (
	"context"
	"os"

	"github.com/kmmproject/kmm/pkg/app"
	"github.com/kmmproject/kmm/pkg/iostreams"
)

func main() {
	os.Exit(app.Main(context.Background(), os.Args, iostreams.System()))
}
