package cmdutil

import (
	"context"
	"fmt"

	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/verify"
)

// Drift is the "config/ACL drift reported" part of failover's and failback's preflight: verify's
// metadata checks of flow f's topic configs (equal modulo config.properties.exclude) and ACL
// coverage (who may read or write a source topic may on its remote topic), as plan notes.
// Drift is reported, never refused: after the cut-over it is what consumers and producers meet
// on the new primary. A check that cannot run is a note too.
func Drift(ctx context.Context, fac *Factory, f *flow.Flow) []string {
	rep, err := verify.Run(ctx, fac.Clusters, f, verify.Options{Level: verify.LevelMetadata, Groups: func(string) bool { return false }})
	if err != nil {
		return []string{fmt.Sprintf("drift of %s not checked: %v", f.Name(), err)}
	}
	var out []string
	for _, fd := range rep.Findings {
		if (fd.Check != verify.CheckConfigs && fd.Check != verify.CheckACLs) || fd.Status == verify.OK {
			continue
		}
		where := f.Name()
		if fd.Topic != "" {
			where = fmt.Sprintf("%s: topic %s (%s on %s)", f.Name(), fd.Topic, fd.RemoteTopic, f.Target)
		}
		out = append(out, fmt.Sprintf("drift (%s, %s): %s: %s", fd.Check, fd.Status, where, fd.Reason))
	}
	return out
}
