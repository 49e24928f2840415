// Package replicatecmd implements `kmm replicate`: load an MM2 properties file, run every flow
// it enables (and the heartbeats-only herders MM2 would run) until SIGINT/SIGTERM, then drain.
package replicatecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/buildinfo"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/httpapi"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/replicator"
	"github.com/kmmproject/kmm/pkg/replicator/replsource"
)

// Options are the flags and arguments of `kmm replicate`.
type Options struct {
	File mm2conf.LoadOptions
	// Flow (--flow S->T) runs that flow alone, enabled even where the file leaves it disabled
	// (the reverse copy of a failback: kmm replicate FILE --flow 'B->A'); empty: every flow.
	Flow              flow.Selector
	Output            string // table or json ("text", table's old name, is table)
	ShutdownTimeout   time.Duration
	ProgressInterval  time.Duration
	Listen            string
	ListenAllowRemote bool
	Force             bool
	// RateLimit is --rate-limit as given ("" unset: the file's kmm.rate.limit.bytes.per.second
	// applies); it sets every flow's limit, in bytes per second with an optional unit.
	RateLimit string
	// Signals delivers SIGINT/SIGTERM; nil subscribes to the process's (tests send their own).
	Signals <-chan os.Signal
}

// Validate returns a usage error (exit 2) for bad flag values, before the file is read.
func (o *Options) Validate() error {
	_, rateErr := cmdutil.ByteRate("rate-limit", o.RateLimit)
	out := o.Output
	if out == oldTable {
		out = "table"
	}
	return errors.Join(
		cmdutil.OneOf("output", out, cmdutil.OutputChoices...),
		cmdutil.NonNegativeDuration("shutdown-timeout", o.ShutdownTimeout),
		cmdutil.PositiveDuration("progress-interval", o.ProgressInterval),
		rateErr,
	)
}

// oldTable is -o table's old name in replicate, still accepted (not shown).
const oldTable = "text"

// Command returns `kmm replicate`.
func Command(f *cmdutil.Factory) *cli.Command {
	return cmdutil.WithExamples(&cli.Command{
		Name:      "replicate",
		Usage:     "run the replication flows of an MM2 properties file until stopped",
		ArgsUsage: "mirror-maker.properties",
		Description: `Runs every flow the file enables (S->T.enabled = true), as connect-mirror-maker.sh would:
remote topics named by the replication policy, records copied in order per partition
(at-least-once), resume positions in mm2-offsets.<S>.internal on the target, offset syncs and
heartbeats in MM2's formats, topic configs and ACLs kept in sync. A flow's rate limit
(kmm.rate.limit.bytes.per.second, or --rate-limit for every flow) caps the bytes of keys, values
and headers its pipelines copy per second together; changing it takes a restart, which keeps
the progress.
SIGINT/SIGTERM drains (stop fetching, wait for the target, store progress) and exits 0, within
--shutdown-timeout (+ 2 s to close the clients) whatever cluster is unreachable. If the bound
expires with records the target has not acknowledged (it is down or slow), kmm gives them up,
says how many per flow, and exits 5: nothing is lost, since progress is stored only for
acknowledged records, and they are copied again on the next start. A second signal aborts at
once (exit 130; records since the last stored position are copied again).

Outages: a cluster is down after 10 s without a usable connection (one WARN naming it, the
cause and since when; a reminder every 30 s; one INFO when it returns). Flows wait and resume
by themselves. With --listen, /readyz answers 503 naming the cluster, since when and why
(/healthz stays 200), kmm_cluster_up and kmm_flow_stalled_seconds say the same in /metrics,
and the Connect-style statuses carry the reason as the tasks' trace. A flow whose records wait
with none delivered for 30 s is stalled (also 503). A browser opening the --listen address gets
a status page that refreshes itself: per flow its state, both clusters up or down, records/s,
lag, what failing over now would cost (as kmm lag --group computes it, every 15 s while the page
is open), checkpoints, workers, and the recent events; /api/status has it as JSON.
A flow whose state in __kmm_state on the target is not REPLICATING (kmm failover marked it) does
not start (exit 3, naming kmm failback; --force overrides); a running flow that gets marked stops
within seconds (drained, final progress stored, checkpoints and group offset sync stopped) and its
connectors show PAUSED, while the process's other flows go on. Each running flow keeps a lease
(replicator/<S>-><T>/<instance>) and a source end-offset snapshot (ends/<S>-><T>) in
__kmm_state on the target, refreshed every 5 s.`,
		Flags: append(append(cmdutil.ConfigFlags(),
			cmdutil.OutputFlag(cmdutil.OutputChoices...)),
			&cli.StringFlag{Name: "flow", Usage: "run only this `FLOW` S->T (quote it in a shell: --flow 'B->A'), even when the file leaves it disabled (it needs its topics filter): the reverse copy during kmm failback"},
			&cli.DurationFlag{Name: "shutdown-timeout", Value: 30 * time.Second, Usage: "how long (`DURATION`) the stop may take after SIGINT/SIGTERM (drain, store progress, close; exit 5 if records were left undelivered)"},
			&cli.DurationFlag{Name: "progress-interval", Value: 10 * time.Second, Usage: "report progress every `INTERVAL`"},
			&cli.StringFlag{Name: "listen", Usage: "serve a status page for browsers (/), /api/status, /metrics, /healthz, /readyz and Connect-style /connectors on this `ADDRESS` (e.g. 127.0.0.1:8083); off unless set"},
			&cli.BoolFlag{Name: "listen-allow-remote", Usage: "allow --listen on a non-loopback address (the endpoint has no authentication)"},
			&cli.StringFlag{Name: "rate-limit", Usage: "copy at most `RATE` bytes (keys, values, headers) per second per flow, e.g. 2000000, 10MB, 10MiB; overrides the file's kmm.rate.limit.bytes.per.second (0 = no limit)"},
			&cli.BoolFlag{Name: "force", Usage: "start even while Apache MM2 runs the same flow (its Connect group <S>-mm2 has members on the target), while another live kmm replicate runs it (a takeover: in exactly-once mode the new one fences the old), or while the flow is failed over (kmm failover)"},
		),
		Action: func(c *cli.Context) error {
			if c.String("output") == oldTable {
				_ = c.Set("output", "table")
			}
			out, err := cmdutil.Output(c, cmdutil.OutputChoices...)
			if err != nil {
				return err
			}
			file, err := cmdutil.LoadOptions(c)
			if err != nil {
				return err
			}
			replicator.TuneProcessMemory(c.Context)
			return Run(c.Context, &Options{File: file, Flow: cmdutil.FlowSelector(c), Output: out, ShutdownTimeout: c.Duration("shutdown-timeout"),
				ProgressInterval: c.Duration("progress-interval"), Listen: c.String("listen"), ListenAllowRemote: c.Bool("listen-allow-remote"),
				Force: c.Bool("force"), RateLimit: c.String("rate-limit")}, f)
		},
	},
		cmdutil.Example{What: "run every enabled flow of the file until Ctrl-C (drains, exit 0)", Cmd: "kmm replicate mirror-maker.properties"},
		cmdutil.Example{What: "only the flows into B and C, as MM2's connect-mirror-maker.sh --clusters B C", Cmd: "kmm replicate mirror-maker.properties --clusters B C"},
		cmdutil.Example{What: "with metrics, health and Connect-style REST on loopback, events as NDJSON", Cmd: "kmm replicate mirror-maker.properties -o json --listen 127.0.0.1:8083"},
		cmdutil.Example{What: "a status page for the people on call: open http://127.0.0.1:8083/ in a browser (or over an SSH tunnel)", Cmd: "kmm replicate mirror-maker.properties --listen 127.0.0.1:8083"},
		cmdutil.Example{What: "at most 10 MB/s per flow, whatever the file says (a restart keeps the progress)", Cmd: "kmm replicate mirror-maker.properties --rate-limit 10MB"},
		cmdutil.Example{What: "after a failover of A->B: copy what B receives back to A while kmm failback waits for it", Cmd: "kmm replicate mirror-maker.properties --flow 'B->A'"},
		cmdutil.Example{What: "the tutorial form with MirrorMaker 1 flags", Cmd: "kmm replicate --clusters SOURCE,TARGET --source-cluster-config source-cluster.properties --target-cluster-config target-cluster.properties --whitelist '.*' --config mirror-maker.properties"},
	)
}

// Run runs `kmm replicate` until ctx ends or a signal arrives (then drains). With -o json a
// failure, an interruption included, is also one NDJSON event on stdout, the last: the
// engine's event schema ({"type":"error","message":...}) and kmm's JSON error document
// (output.ErrorDoc: "kind":"error", exit_code, class, cause, hint) in one record, so a consumer
// of the event stream learns why it ended.
func Run(ctx context.Context, o *Options, fac *cmdutil.Factory) error {
	err := run(ctx, o, fac)
	if err != nil && o.Output == "json" {
		_ = output.WriteLine(fac.IO.Out, errorEvent{Time: fac.Now().UTC(), Type: replicator.EvError, Message: err.Error(),
			ErrorDoc: fac.ErrorDoc("kmm replicate", err)})
	}
	return err
}

// errorEvent is replicator.Event's schema for the error that ends the command, with kmm's JSON
// error document's fields.
type errorEvent struct {
	Time    time.Time            `json:"time"`
	Type    replicator.EventType `json:"type"`
	Flow    string               `json:"flow"`
	Message string               `json:"message"`
	output.ErrorDoc
}

func run(ctx context.Context, o *Options, fac *cmdutil.Factory) error {
	if err := cmdutil.Validate(o); err != nil {
		return err
	}
	parent := ctx
	io, log := fac.IO, fac.Logger()
	cfg, flows, err := fac.Flows(o.File)
	if err != nil {
		return err
	}
	if o.Flow != (flow.Selector{}) {
		f, err := flow.One(flows, o.Flow)
		if err != nil {
			return err
		}
		if !f.Enabled {
			if f, err = flow.AsEnabled(f); err != nil {
				return err
			}
			fmt.Fprintf(io.ErrOut, "kmm: --flow %s: the file leaves it disabled; running it, with offset syncs, as asked\n", f.Name())
		}
		flows = []*flow.Flow{f}
	}
	rate, _ := cmdutil.ByteRate("rate-limit", o.RateLimit) // validated
	for _, f := range flows {
		if rate >= 0 {
			f.RateLimit = rate
		}
		what := "records, offset syncs, heartbeats"
		if !f.Enabled {
			what = "heartbeats only (MM2 runs this herder because heartbeats are on for the pair)"
		}
		limit := ""
		if f.Enabled && f.RateLimit > 0 {
			from := "kmm.rate.limit.bytes.per.second"
			if rate >= 0 {
				from = "--rate-limit"
			}
			limit = fmt.Sprintf("; rate limit %s/s (%s)", cmdutil.FormatBytes(f.RateLimit), from)
		}
		fmt.Fprintf(io.ErrOut, "kmm: flow %s (%s -> %s): %s; %d pipeline(s)%s\n", f.Name(), f.SourceBootstrap, f.TargetBootstrap, what, f.Tasks, limit)
	}
	r := newRenderer(io.Out, io.ErrOut, o.Output == "json", io.IsStderrTTY(), log)
	r.now = fac.Now
	defer r.finish()

	// The first signal cancels ctx (drain); a second one aborts at once.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sigs := o.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		sigs = ch
	}
	rep := replicator.New(flows, replicator.Options{Sink: r, ShutdownTimeout: o.ShutdownTimeout,
		ProgressEvery: o.ProgressInterval, Force: o.Force})
	if o.Listen != "" {
		src := replsource.New(rep, flows)
		defer src.Close() // after the server's Close (defers run last first)
		srv, err := httpapi.New(o.Listen, src, httpapi.Options{
			AllowRemote: o.ListenAllowRemote, Configs: replsource.Configs(cfg),
			Version: buildinfo.Version, Commit: buildinfo.Commit, Logger: log})
		if errors.Is(err, httpapi.ErrNotLoopback) {
			err = kerr.WithHint(err, "the endpoint has no authentication: use --listen 127.0.0.1:PORT, or --listen-allow-remote to expose it")
		}
		if err != nil {
			return err
		}
		defer func() {
			sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer scancel()
			_ = srv.Close(sctx)
		}()
		fmt.Fprintf(io.ErrOut, "kmm: serving http://%s (status page /, /api/status, /metrics, /healthz, /readyz, /connectors)\n", srv.Addr())
		rep.SetListen("http://" + srv.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- rep.Run(ctx) }()
	signals := 0
	var stopAt time.Time
	for {
		select {
		case err := <-done:
			if (signals > 0 || parent.Err() != nil) && !r.anyStarted() {
				// Nothing ran: the interrupt is not a clean stop (exit 130, not 0).
				return kerr.New(kerr.Interrupted, "interrupted before any flow started: nothing was replicated")
			}
			if signals > 0 {
				fmt.Fprintf(io.ErrOut, "kmm: stopped %s after the signal\n", fac.Now().Sub(stopAt).Round(100*time.Millisecond))
			}
			if err != nil && strings.Contains(err.Error(), "context canceled") && signals > 0 {
				return nil
			}
			return err
		case s := <-sigs:
			signals++
			if signals == 1 {
				stopAt = fac.Now()
				fmt.Fprintf(io.ErrOut, "kmm: %s: draining within %s (send it again to abort at once)\n", s, o.ShutdownTimeout)
				cancel()
				continue
			}
			return kerr.New(kerr.Interrupted, "aborted by a second %s before the drain finished; records since the last stored position will be copied again", s)
		}
	}
}

// RunFlows runs flows in this process with the replicate engine until ctx ends, then drains
// them (acknowledged progress stored, leases released) and returns: kmm failback
// --start-reverse runs the reverse flow this way for the duration of its catch-up. Its events
// are not printed (the caller reports); a stop that is only ctx's end returns nil.
func RunFlows(ctx context.Context, flows []*flow.Flow) error {
	err := replicator.Run(ctx, flows, replicator.Options{ShutdownTimeout: 30 * time.Second, ProgressEvery: -1})
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
