package configcmd

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
)

// runExplainNames answers --topic, --group and --list-topics: mm2conf decides, this renders.
func runExplainNames(o *ExplainOptions, fac *cmdutil.Factory, cfg *mm2conf.Config, loadErr error) error {
	io := fac.IO
	flows, err := cfg.ExplainFlows(o.Flow)
	if err != nil {
		return kerr.Wrap(kerr.Usage, err)
	}
	items := mm2conf.TopicVerdicts(flows, o.Topics)
	if o.AllTopics {
		if loadErr != nil {
			return loadErr // nothing talks to a cluster with a broken configuration
		}
		resolved, err := flow.FromMM2(cfg)
		if err != nil {
			return kerr.Wrap(kerr.Usage, err)
		}
		byName := map[string]*flow.Flow{}
		for _, rf := range resolved {
			byName[rf.Name()] = rf
		}
		ctx := o.Ctx
		if ctx == nil {
			ctx = context.Background()
		}
		for _, f := range flows {
			rf := byName[f.Name()]
			if rf == nil {
				return kerr.New(kerr.Usage, "flow %s is not resolved", f.Name())
			}
			names, err := sourceTopics(ctx, fac, rf)
			if err != nil {
				return err
			}
			vs := mm2conf.TopicVerdicts([]*mm2conf.FlowConfig{f}, names)
			n := 0
			for _, v := range vs {
				if v.Replicated {
					n++
				}
			}
			fmt.Fprintf(io.ErrOut, "kmm: flow %s: %d of the %d topics on %s are replicated\n", f.Name(), n, len(vs), f.Source)
			items = append(items, vs...)
		}
	}
	items = append(items, mm2conf.GroupVerdicts(flows, o.Groups)...)
	if o.Output == "json" {
		err = output.WriteJSON(io.Out, output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "config-explain-names", GeneratedAt: fac.Now().UTC(), Items: nonNilVerdicts(items)})
	} else {
		width := io.Width()
		if o.Wide {
			width = 0 // one line per name
		}
		err = renderVerdicts(io, items, width)
	}
	if err != nil {
		return err
	}
	return loadErr
}

func nonNilVerdicts(v []mm2conf.NameVerdict) []mm2conf.NameVerdict {
	if v == nil {
		return []mm2conf.NameVerdict{}
	}
	return v
}

// renderVerdicts writes the verdicts as a table fitted to width (0: one line per verdict).
func renderVerdicts(io *iostreams.IOStreams, items []mm2conf.NameVerdict, width int) error {
	var rows [][]string
	for _, v := range items {
		name, kind, what, target := v.Topic, "topic", "no", "-"
		if v.Group != "" {
			name, kind = v.Group, "group"
		}
		switch {
		case v.Topic != "" && v.Replicated:
			what, target = "replicated", v.TargetTopic
		case v.Group != "" && v.Replicated && v.Synced != nil && *v.Synced:
			what, target = "checkpointed, synced", v.TargetGroup
		case v.Group != "" && v.Replicated:
			what, target = "checkpointed", v.TargetGroup
		}
		rows = append(rows, []string{name, kind, v.Flow, what, target, v.Reason})
	}
	return output.TableWidth(io.Out, []string{"NAME", "KIND", "FLOW", "DOES", "ON TARGET", "WHY"}, rows, width)
}

// sourceTopics lists the topics of a flow's source cluster (internal ones included), through
// the factory's cluster opener.
func sourceTopics(ctx context.Context, fac *cmdutil.Factory, f *flow.Flow) ([]string, error) {
	src, err := fac.Clusters.Open(f, flow.Source)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := src.Ping(ctx, 10*time.Second); err != nil {
		return nil, kerr.WithHint(kerr.Wrap(kerr.Unreachable, cluster.Named(f.Source, f.SourceBootstrap, err)),
			cluster.UnreachableHint("--list-topics lists the topics of each flow's source cluster", f.Source))
	}
	ts, err := src.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ts))
	for t := range ts {
		names = append(names, t)
	}
	sort.Strings(names)
	return names, nil
}
