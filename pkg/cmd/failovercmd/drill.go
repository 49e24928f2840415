package failovercmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// Drill is a drill plan (--plan drill.toml): everything a failover run needs, in one reviewed file.
type Drill struct {
	Flow        string   `toml:"flow"`
	Mode        string   `toml:"mode"`
	Groups      []string `toml:"groups"`
	GroupsRegex string   `toml:"groups_regex"`
	Timeout     duration `toml:"timeout"`
	Fence       struct {
		Method   string   `toml:"method"`
		QuietFor duration `toml:"quiet_for"`
	} `toml:"fence"`
	Gates struct {
		MaxRPORecords *int64 `toml:"max_rpo_records"`
		AcceptLoss    bool   `toml:"accept_loss"`
	} `toml:"gates"`
	Hooks struct {
		Pre  string `toml:"pre"`
		Post string `toml:"post"`
	} `toml:"hooks"`
}

type duration struct {
	time.Duration
	set bool
}

func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (e.g. 10s, 5m)", b)
	}
	d.Duration, d.set = v, true
	return nil
}

// LoadDrill reads a drill plan strictly: a syntax error, a wrong type or an unknown key is a
// usage error (exit 2) naming file:line and the fix.
func LoadDrill(path string) (*Drill, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, kerr.Wrap(kerr.Usage, fmt.Errorf("--plan: %w", err))
	}
	var d Drill
	md, err := toml.Decode(string(data), &d)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, kerr.WithHint(kerr.New(kerr.Usage, "%s:%d: %s", path, pe.Position.Line, pe.Message), "see testdata/drill/drill.toml for every key and its type")
		}
		return nil, kerr.WithHint(kerr.New(kerr.Usage, "%s: %v", path, err), "see testdata/drill/drill.toml for every key and its type")
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0].String()
		return nil, kerr.WithHint(kerr.New(kerr.Usage, "%s:%d: unknown key %q", path, lineOf(data, und[0][len(und[0])-1]), k),
			"known keys: flow, mode, groups, groups_regex, timeout, [fence] method quiet_for, [gates] max_rpo_records accept_loss, [hooks] pre post")
	}
	return &d, nil
}

// lineOf is the first line that defines key (1 when not found).
func lineOf(data []byte, key string) int {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, key) && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(l, key)), "=") ||
			l == "["+key+"]" || strings.HasSuffix(strings.TrimSuffix(l, "]"), "."+key) {
			return n
		}
	}
	return 1
}

// apply fills o from the drill; flags given on the command line win.
func (d *Drill) apply(o *Options, set func(string) bool) {
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
	if d.Timeout.set && !set("timeout") {
		o.Timeout = d.Timeout.Duration
	}
	if d.Fence.Method != "" && !set("fence") {
		o.Fence = d.Fence.Method
	}
	if d.Fence.QuietFor.set && !set("quiet-for") {
		o.QuietFor = d.Fence.QuietFor.Duration
	}
	if d.Gates.MaxRPORecords != nil && !set("max-rpo-records") {
		o.MaxRPO = *d.Gates.MaxRPORecords
	}
	if d.Gates.AcceptLoss && !set("accept-loss") {
		o.AcceptLoss = true
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
