package cmdutil

import (
	"slices"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/switchover"
	"github.com/kmmproject/kmm/pkg/verify"
)

// oldNames are the names flags had before every meaning got one name across kmm's commands
// (issue 35). A command that had the old name keeps it as an alias of the new one
// (Aliases: OldNames(name)); it is accepted as before but shown nowhere: not in help, not in
// shell completion. CHANGELOG.md lists them.
var oldNames = map[string][]string{
	"drill":           {"plan"},    // failover, failback: the drill file, as verify names it
	"max-lag-records": {"max-lag"}, // lag, status: as verify names it
	"list-topics":     {"topics"},  // config explain's switch (verify's --topics is a regex)
}

// OldNames returns the old names of the flag called name, for its Aliases.
func OldNames(name string) []string { return slices.Clone(oldNames[name]) }

// IsOldName reports whether alias is an old name of the flag called name (a hidden alias).
func IsOldName(name, alias string) bool { return slices.Contains(oldNames[name], alias) }

// VisibleNames are f's names without its old ones: what help and completion show.
func VisibleNames(f cli.Flag) []string {
	names := f.Names()
	var out []string
	for _, n := range names {
		if IsOldName(names[0], n) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// Dashed is a flag name as typed: -o, --output.
func Dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// The flags that take one of a few words: validation and shell completion share these lists.
var (
	OutputChoices   = []string{"table", "json"}                                                                    // -o, every command
	ModeChoices     = []string{"planned", "emergency", "rehearse"}                                                 // failover --mode
	LevelChoices    = []string{verify.LevelMetadata, verify.LevelSample, verify.LevelFull}                         // verify --level
	FenceChoices    = []string{switchover.FenceNone, switchover.FenceACL, switchover.FenceHook}                    // failover, failback --fence
	StrandedChoices = []string{switchover.StrandedQuarantine, switchover.StrandedSkip, switchover.StrandedDeliver} // failback --stranded
	FromChoices     = []string{"groups"}                                                                           // verify --from
	LogLevelChoices = []string{"debug", "info", "warn", "error"}                                                   // --log-level
	LogFormats      = []string{"text", "json"}                                                                     // --log-format
	ColorChoices    = []string{"auto", "always", "never"}                                                          // --color
)

// FlagChoices returns the words the flag called name takes (shell completion offers them), nil
// for any value.
func FlagChoices(name string) []string {
	switch name {
	case "output", "o":
		return OutputChoices
	case "mode":
		return ModeChoices
	case "level":
		return LevelChoices
	case "fence":
		return FenceChoices
	case "stranded":
		return StrandedChoices
	case "from":
		return FromChoices
	case "log-level":
		return LogLevelChoices
	case "log-format":
		return LogFormats
	case "color":
		return ColorChoices
	}
	return nil
}

// Off is the value of a count gate that switches it off (--max-rpo-records -1).
const Off = -1

// AtLeast refuses an int value of --name below lo (exit 2), naming the flag and the range.
func AtLeast(name string, v, lo int64) error {
	if v >= lo {
		return nil
	}
	return Usagef("", "--%s must be %d or more, not %d", name, lo, v)
}

// AtLeastOrOff is AtLeast that also accepts Off (-1), the value that switches the gate off.
func AtLeastOrOff(name string, v, lo int64) error {
	if v >= lo || v == Off {
		return nil
	}
	return Usagef("", "--%s must be %d or more, or %s to switch it off, not %d", name, lo, strconv.Itoa(Off), v)
}
