package app

import (
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
)

// checkFlagValues refuses, on every command and the global flags, a flag that takes a value
// (anything but a switch) given one that starts with '-': `kmm failover F --report --dry-run
// --yes` must not write its report to a file named --dry-run and then fail over for real, and
// `--topic --` names no topic. urfave/cli (Go's flag package) takes whatever word follows a
// value flag; this runs before it, on the arguments as reorderArgs left them, so before anything
// is read or any cluster is asked. Both forms are checked: `--report --dry-run` and
// `--report=--dry-run`, and every name of a flag (its aliases, its old names).
//
// Negative numbers: a number flag (int, duration) given a negative number passes here, as no
// flag of kmm is named by a number; the command's Validate then says which range the flag
// takes (--max-rpo-records -5: "0 or more, or -1 to switch it off"). Unsigned flags refuse it
// here. A lone '-' is refused too: no flag of kmm reads stdin or writes stdout through a file
// argument named '-' (--report, --junit and --drill take real files), so '-' would only create
// a file named '-'.
func checkFlagValues(a *cli.App, args []string) error {
	i := 1
	flags := append([]cli.Flag{cli.HelpFlag}, a.Flags...)
	// Global flags, before the command (reorderArgs moved those given after it here).
	for i < len(args) && isFlagToken(args[i]) {
		next, err := checkOne(flags, args, i, "")
		if err != nil {
			return err
		}
		i = next
	}
	cmd, path, i := commandAt(a, args, i)
	if cmd == nil || cmd.SkipFlagParsing {
		return nil
	}
	for i < len(args) && args[i] != "--" {
		if !isFlagToken(args[i]) {
			i++
			continue
		}
		next, err := checkOne(cmd.Flags, args, i, path)
		if err != nil {
			return err
		}
		i = next
	}
	return nil
}

func isFlagToken(s string) bool { return strings.HasPrefix(s, "-") && s != "-" && s != "--" }

// checkOne checks the flag token args[i] against flags and returns the index after it (and its
// value, when separate). path names the command in the hint ("" for global flags).
func checkOne(flags []cli.Flag, args []string, i int, path string) (int, error) {
	tok := args[i]
	name, value, inline := strings.Cut(strings.TrimLeft(tok, "-"), "=")
	fl := lookupFlag(flags, name)
	if fl == nil || !takesValueFlag(fl) {
		return i + 1, nil // unknown flags and switches are urfave/cli's to judge
	}
	next := i + 1
	if !inline {
		if i+1 >= len(args) {
			return next, nil // "flag needs an argument": urfave/cli says so (exit 2)
		}
		value, next = args[i+1], i+2
	}
	if !strings.HasPrefix(value, "-") {
		return next, nil
	}
	if isNumberFlag(fl) && isNegativeNumber(fl, value) {
		if isUnsignedFlag(fl) {
			return next, cmdutil.Usagef(helpHint(path), "%s must be 0 or more, not %s", cmdutil.Dashed(name), value)
		}
		return next, nil // the command's Validate judges the range
	}
	dashed := cmdutil.Dashed(name)
	example := strings.TrimSpace(strings.SplitN(flagString(fl), "\t", 2)[0])
	if k := strings.IndexAny(example, ",["); k >= 0 {
		example = strings.TrimSpace(example[:k])
	}
	hint := "give " + dashed + " its value right after it, e.g. " + example
	if lookupFlag(flags, strings.SplitN(strings.TrimLeft(value, "-"), "=", 2)[0]) != nil || value == "--" || value == "-" {
		return next, cmdutil.Usagef(hint, "%s needs a value, but %q follows it (a value cannot start with '-'); nothing was done", dashed, value)
	}
	return next, cmdutil.Usagef(hint, "%s %q: a value cannot start with '-'; nothing was done", dashed, value)
}

func helpHint(path string) string {
	if path == "" {
		return "run 'kmm --help'"
	}
	return "run 'kmm " + path + " --help'"
}

func lookupFlag(flags []cli.Flag, name string) cli.Flag {
	for _, fl := range flags {
		for _, n := range fl.Names() {
			if n == name {
				return fl
			}
		}
	}
	return nil
}

// takesValueFlag reports whether fl takes a value (every flag but a switch).
func takesValueFlag(fl cli.Flag) bool {
	if _, ok := fl.(*cli.BoolFlag); ok {
		return false
	}
	if dg, ok := fl.(cli.DocGenerationFlag); ok {
		return dg.TakesValue()
	}
	return true
}

func isNumberFlag(fl cli.Flag) bool {
	switch fl.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag, *cli.Float64Flag, *cli.DurationFlag,
		*cli.IntSliceFlag, *cli.Int64SliceFlag, *cli.Float64SliceFlag:
		return true
	}
	return false
}

func isUnsignedFlag(fl cli.Flag) bool {
	switch fl.(type) {
	case *cli.UintFlag, *cli.Uint64Flag:
		return true
	}
	return false
}

// isNegativeNumber reports whether v is a negative value of fl's kind (-5, -1.5, -10s).
func isNegativeNumber(fl cli.Flag, v string) bool {
	if _, ok := fl.(*cli.DurationFlag); ok {
		d, err := time.ParseDuration(v)
		return err == nil && d < 0
	}
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f < 0
}
