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
)

// commands returns kmm's subcommands.
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
