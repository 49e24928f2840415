package failovercmd

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/kmmproject/kmm/pkg/drill"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// LoadDrill reads a drill file (--drill drill.toml) strictly: a syntax error, a wrong type or an
// unknown key is a usage error (exit 2) naming file:line; see pkg/drill.
func LoadDrill(path string) (*drill.Drill, error) { return drill.Load(path) }

// applyDrill fills o from the drill: the shared fields (drshared.Common.ApplyDrill) and
// failover's own (mode, gates, report, hooks); flags given on the command line win.
func applyDrill(d *drill.Drill, o *Options, set func(string) bool) {
	o.ApplyDrill(d, set)
	if d.Mode != "" && !set("mode") {
		o.Mode = d.Mode
	}
	if d.Gates.MaxRPORecords != nil && !set("max-rpo-records") {
		o.MaxRPO = *d.Gates.MaxRPORecords
	}
	if d.Gates.MaxCheckpointAge.Set && !set("max-checkpoint-age") {
		o.MaxCkAge = d.Gates.MaxCheckpointAge.Duration
	}
	if d.Gates.AcceptLoss && !set("accept-loss") {
		o.AcceptLoss = true
	}
	if d.Report != "" && !set("report") {
		o.Report = d.Report
	}
	o.PreHook, o.PostHook = d.Hooks.Pre, d.Hooks.Post
}

// runHook runs a drill hook with sh -c; its output goes to stderr.
func runHook(ctx context.Context, errOut interface{ Write([]byte) (int, error) }, which, cmd string) error {
	if cmd == "" {
		return nil
	}
	fmt.Fprintf(errOut, "kmm: %s hook: %s\n", which, cmd)
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Stdout, c.Stderr = errOut, errOut
	if err := c.Run(); err != nil {
		return kerr.New(kerr.CheckFailed, "%s hook %q failed: %v; nothing was changed by kmm", which, cmd, err)
	}
	return nil
}
