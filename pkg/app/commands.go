package app

import (
	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// commands returns kmm's subcommands. Commands not built yet say so and exit 1; they never
// print fake output.
func commands(f *Factory) []*cli.Command {
	return []*cli.Command{
		notYet("replicate", "run the replication flows of an MM2 properties file until stopped"),
		notYet("status", "show the health of each replication flow"),
		notYet("lag", "show replication lag and consumer lag on both sides"),
		notYet("translate-offsets", "translate consumer group offsets from source to target"),
		notYet("failover", "plan and execute a failover to the target cluster"),
		notYet("failback", "plan and execute a failback to the original cluster"),
		notYet("verify", "compare source and target topics record by record"),
		configCommand(f),
	}
}

func notYet(name, usage string) *cli.Command {
	return &cli.Command{
		Name:            name,
		Usage:           usage,
		SkipFlagParsing: true,
		Action: func(*cli.Context) error {
			return kerr.New(kerr.NotImplemented, "%s: not implemented yet", name)
		},
	}
}

func configCommand(f *Factory) *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "check and explain MM2 properties files",
		Subcommands: []*cli.Command{
			notYet("check", "validate an MM2 properties file and print the resolved flows"),
			notYet("explain", "show every effective setting and where it came from"),
		},
		OnUsageError: usageError,
	}
}
