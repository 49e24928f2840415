package cmdutil

import (
	"context"
	"fmt"
	"io"

	"github.com/kmmproject/kmm/pkg/flow"
)

// MM2Running is the preflight check "no Apache MM2 runs the flow": MM2's Connect group (the
// worker's group.id, default <S>-mm2) on the target has members. MM2 would go on writing into
// the new primary (and, in an emergency, resume when the source returns). It says why when the
// group cannot be described (a warning on errOut; the check does not block then).
func MM2Running(ctx context.Context, fac *Factory, f *flow.Flow, errOut io.Writer) string {
	if f.MM2Group == "" {
		return ""
	}
	if fac.Groups == nil {
		fmt.Fprintf(errOut, "kmm: warning: could not check whether Apache MM2 runs flow %s (no group prober)\n", f.Name())
		return ""
	}
	g, err := fac.Groups.DescribeAnyGroup(ctx, f, flow.Target, f.MM2Group)
	if err != nil {
		fmt.Fprintf(errOut, "kmm: warning: could not check whether Apache MM2 runs flow %s (Connect group %s on %s): %v\n", f.Name(), f.MM2Group, f.Target, err)
		return ""
	}
	if g.Members > 0 {
		return fmt.Sprintf("Apache MirrorMaker 2 is running flow %s (Connect group %s on %s has %d member(s), state %s): stop MM2 first (or --force)",
			f.Name(), f.MM2Group, f.Target, g.Members, g.State)
	}
	return ""
}
