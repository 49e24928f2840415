package cmdutil

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/whoami"
)

// Factory hands a command everything it may use: the IO streams, a logger, a clock, who runs it
// (user@host), the flows of the MM2 file named on its command line, and an Opener for the
// clusters of those flows. pkg/app builds the real one (librdkafka clusters, the wall clock,
// pkg/whoami); tests build their own (in-memory streams, a fixed clock, fake or in-process kfake
// clusters). Commands never open clients, read the clock, the host or the environment any other
// way.
type Factory struct {
	IO     *iostreams.IOStreams
	Logger func() *slog.Logger
	// Clock is the time (read it with Now); nil: the wall clock.
	Clock func() time.Time
	// Who is the user and host running the command (read it with UserAtHost and Host); nil:
	// pkg/whoami.
	Who      func() (user, host string)
	Clusters cluster.Opener
	// Groups describes groups librdkafka cannot (Kafka Connect's); nil: such checks are skipped
	// with a warning.
	Groups cluster.GroupProber
	// Getenv reads the environment (test-only hooks such as KMM_TEST_PAUSE_AFTER_STEP).
	Getenv func(string) string
	// ExitCode is pkg/app's map of errors to exit codes (for the JSON error documents a
	// command prints itself: replicate's last event); nil: 1.
	ExitCode func(error) int
	// Replicate runs flows in this process with kmm replicate's engine until ctx ends, then
	// drains them (progress stored) and returns (failback --start-reverse); nil: not available.
	Replicate func(ctx context.Context, flows []*flow.Flow) error
}

// NewTestFactory returns a factory over in-memory streams with the given opener and clock; the
// logger writes to the error stream and the environment is empty.
func NewTestFactory(io *iostreams.IOStreams, clusters cluster.Opener, now func() time.Time) *Factory {
	return &Factory{IO: io, Clusters: clusters, Clock: now, Getenv: func(string) string { return "" },
		Logger: func() *slog.Logger { return slog.New(slog.NewTextHandler(io.ErrOut, nil)) }}
}

// Now returns the factory clock's time.
func (f *Factory) Now() time.Time {
	if f.Clock == nil {
		return time.Now()
	}
	return f.Clock()
}

func (f *Factory) who() (string, string) {
	if f.Who == nil {
		return whoami.Who()
	}
	return f.Who()
}

// UserAtHost returns who runs the command, "user@host": the "by" of kmm's records and reports.
func (f *Factory) UserAtHost() string {
	name, host := f.who()
	return name + "@" + host
}

// Host returns the name of the host running the command.
func (f *Factory) Host() string {
	_, host := f.who()
	return host
}

// Env reads an environment variable through the factory.
func (f *Factory) Env(key string) string {
	if f.Getenv == nil {
		return os.Getenv(key)
	}
	return f.Getenv(key)
}

// Flows reads the configuration named by opts, prints its diagnostics to the error stream, and
// returns it with its flows converted and validated (heartbeats-only flows included: select
// with flow.One or flow.All). Errors are usage errors: nothing has talked to a cluster yet.
func (f *Factory) Flows(opts mm2conf.LoadOptions) (*mm2conf.Config, []*flow.Flow, error) {
	return loadFlows(opts, f.IO.ErrOut)
}

func loadFlows(opts mm2conf.LoadOptions, errOut io.Writer) (*mm2conf.Config, []*flow.Flow, error) {
	cfg, err := Load(opts, errOut)
	if err != nil {
		return nil, nil, err
	}
	flows, err := flow.FromMM2(cfg)
	if err != nil {
		return nil, nil, kerr.Wrap(kerr.Usage, err)
	}
	return cfg, flows, nil
}
