package switchover

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
)

type fakeProber struct {
	g   cluster.AnyGroup
	err error
	ask []string
}

func (p *fakeProber) DescribeAnyGroup(_ context.Context, f *flow.Flow, side flow.Side, group string) (cluster.AnyGroup, error) {
	p.ask = append(p.ask, f.Alias(side)+"/"+group)
	return p.g, p.err
}

// The MM2 check asks the target for the flow's Connect group and refuses when it has members;
// a group it cannot describe is a warning, not a refusal.
func TestMM2Running(t *testing.T) {
	f := &flow.Flow{Source: "A", Target: "B", SourceAlias: "A", TargetAlias: "B", MM2Group: "A-mm2"}
	for _, c := range []struct {
		name      string
		p         *fakeProber
		want, err string
	}{
		{"running", &fakeProber{g: cluster.AnyGroup{State: "Stable", ProtocolType: "connect", Members: 2}}, "Connect group A-mm2 on B has 2 member(s), state Stable", ""},
		{"stopped", &fakeProber{g: cluster.AnyGroup{State: "Empty", ProtocolType: "connect"}}, "", ""},
		{"unknown", &fakeProber{err: errors.New("SASL mechanism not supported")}, "", "could not check whether Apache MM2 runs flow A->B (Connect group A-mm2 on B): SASL"},
	} {
		var warned []string
		env := Env{Groups: c.p, Warn: func(m string) { warned = append(warned, m) }}
		got := MM2Running(context.Background(), env, f)
		w := strings.Join(warned, "\n")
		if (c.want == "" && got != "") || !strings.Contains(got, c.want) || !strings.Contains(w, c.err) || (c.err == "" && w != "") {
			t.Errorf("%s: %q, warned %q", c.name, got, w)
		}
		if len(c.p.ask) != 1 || c.p.ask[0] != "B/A-mm2" {
			t.Errorf("%s: asked %v", c.name, c.p.ask)
		}
	}
}
