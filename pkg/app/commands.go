package app

import (
	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/cmd/configcmd"
	"github.com/kmmproject/kmm/pkg/cmd/lagcmd"
	"github.com/kmmproject/kmm/pkg/cmd/replicatecmd"
	"github.com/kmmproject/kmm/pkg/cmd/statuscmd"
	"github.com/kmmproject/kmm/pkg/cmd/translatecmd"
	"github.com/kmmproject/kmm/pkg/cmd/verifycmd"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// commands returns kmm's subcommands. Commands not built yet say so and exit 1; they never
// print fake output.
func commands(f *cmdutil.Factory) []*cli.Command {
	return []*cli.Command{
		replicatecmd.Command(f),
		statuscmd.Command(f),
		lagcmd.Command(f),
		translatecmd.Command(f),
		notYet("failover", "plan and execute a failover to the target cluster"),
		notYet("failback", "plan and execute a failback to the original cluster"),
		verifycmd.Command(f),
		configcmd.Command(f),
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
