package app

import (
	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/cmd/configcmd"
	"github.com/kmmproject/kmm/pkg/cmd/failbackcmd"
	"github.com/kmmproject/kmm/pkg/cmd/failovercmd"
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
		failovercmd.Command(f),
		failbackcmd.Command(f),
		verifycmd.Command(f),
		configcmd.Command(f),
	}
}

// notYetSuffix marks the usage line of a command that is not built yet.
const notYetSuffix = " (not implemented yet)"

func notYet(name, usage string) *cli.Command {
	return &cli.Command{
		Name:               name,
		Usage:              usage + notYetSuffix,
		ArgsUsage:          "mirror-maker.properties",
		Description:        "This command is not implemented yet: it exits 1 and changes nothing.",
		SkipFlagParsing:    true,
		CustomHelpTemplate: cli.CommandHelpTemplate,
		Action: func(c *cli.Context) error {
			for _, a := range c.Args().Slice() {
				if a == "--help" || a == "-h" {
					return cli.ShowCommandHelp(c.Lineage()[1], name)
				}
			}
			return kerr.New(kerr.NotImplemented, "%s: not implemented yet", name)
		},
	}
}
