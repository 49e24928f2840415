// Package drill is kmm's drill file: one reviewed TOML file that `kmm failover --drill`,
// `kmm failback --drill` and `kmm verify --drill` read (failover's flow, mode, groups, fence,
// gates and hooks at the top level, failback the flow, groups, timeout and fence of them;
// verify's thresholds in [verify]). It is read strictly through pkg/tomlfile: a syntax
// error, a wrong type or a key neither command knows is a usage error naming file:line, so a
// typo in a drill never passes silently. Commands apply it; flags given on the command line win.
package drill

import (
	"fmt"
	"time"

	"github.com/kmmproject/kmm/pkg/tomlfile"
)

// Drill is a drill file. Every field is optional; a command applies what it knows.
type Drill struct {
	Flow        string   `toml:"flow"`
	Mode        string   `toml:"mode"`
	Groups      []string `toml:"groups"`
	GroupsRegex string   `toml:"groups_regex"`
	Timeout     Duration `toml:"timeout"`
	// Report is the path of failover's evidence report (--report FILE.md).
	Report string `toml:"report"`
	Fence  struct {
		Method     string   `toml:"method"`
		QuietFor   Duration `toml:"quiet_for"`
		Principals []string `toml:"principals"` // method "acl"
		Command    string   `toml:"command"`    // method "hook"
	} `toml:"fence"`
	Gates struct {
		MaxRPORecords    *int64   `toml:"max_rpo_records"`
		MaxCheckpointAge Duration `toml:"max_checkpoint_age"`
		AcceptLoss       bool     `toml:"accept_loss"`
	} `toml:"gates"`
	Hooks struct {
		Pre  string `toml:"pre"`
		Post string `toml:"post"`
	} `toml:"hooks"`
	// Verify holds the thresholds and level of `kmm verify` (and of a drill's check after a
	// failover).
	Verify struct {
		Level            string   `toml:"level"`
		MaxLagRecords    *int64   `toml:"max_lag_records"`
		MaxLagTime       Duration `toml:"max_lag_time"`
		MaxCheckpointAge Duration `toml:"max_checkpoint_age"`
		MaxDuplicates    *int64   `toml:"max_duplicates"`
	} `toml:"verify"`
}

// Duration is a TOML string such as "10s" or "5m"; Set tells a zero value from an absent key.
type Duration struct {
	time.Duration
	Set bool
}

// UnmarshalText parses a Go duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (e.g. \"10s\", \"5m\")", b)
	}
	d.Duration, d.Set = v, true
	return nil
}

// Given reads the drill file named by --drill and hands it to apply (which fills what the
// command line did not set); an empty path is no drill. Its errors are Load's.
func Given(path string, apply func(*Drill)) error {
	if path == "" {
		return nil
	}
	d, err := Load(path)
	if err != nil {
		return err
	}
	apply(d)
	return nil
}

// Load reads a drill file strictly (see the package comment).
func Load(path string) (*Drill, error) {
	var d Drill
	if err := tomlfile.DecodeFile(path, &d); err != nil {
		return nil, err
	}
	return &d, nil
}
