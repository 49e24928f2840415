package failovercmd

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/kmmproject/kmm/pkg/drill"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// LoadDrill reads a drill file (--plan drill.toml) strictly: a syntax error, a wrong type or an
// unknown key is a usage error (exit 2) naming file:line; see pkg/drill.
func LoadDrill(path string) (*drill.Drill, error) { return drill.Load(path) }

// applyDrill fills o from the drill; flags given on the command line win.
func applyDrill(d *drill.Drill, o *Options, set func(string) bool) {
	if d.Flow != "" && !set("flow") {
		o.Flow.Flow = d.Flow
	}
	if d.Mode != "" && !set("mode") {
		o.Mode = d.Mode
	}
	if len(d.Groups) > 0 && !set("group") {
		o.Groups = d.Groups
	}
	if d.GroupsRegex != "" && !set("groups") {
		o.GroupsRegex = d.GroupsRegex
	}
	if d.Timeout.Set && !set("timeout") {
		o.Timeout = d.Timeout.Duration
	}
	if d.Fence.Method != "" && !set("fence") {
		o.Fence = d.Fence.Method
	}
	if len(d.Fence.Principals) > 0 && !set("fence-principal") {
		o.FencePrincipals = d.Fence.Principals
	}
	if d.Fence.Command != "" && !set("fence-command") {
		o.FenceCommand = d.Fence.Command
	}
	if d.Fence.QuietFor.Set && !set("quiet-for") {
		o.QuietFor = d.Fence.QuietFor.Duration
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
