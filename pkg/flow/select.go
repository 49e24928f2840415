package flow

import (
	"strings"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// Selector is how a command line names flows: --flow S->T, or --source/--target (either may be
// empty). Every command that takes a flow selects through it.
type Selector struct {
	Flow   string // "S->T"
	Source string
	Target string
}

// ParseName splits "S->T" into its aliases.
func ParseName(name string) (src, tgt string, err error) {
	src, tgt, ok := strings.Cut(name, "->")
	src, tgt = strings.TrimSpace(src), strings.TrimSpace(tgt)
	if !ok || src == "" || tgt == "" || strings.Contains(tgt, "->") {
		return "", "", kerr.WithHint(kerr.New(kerr.Usage, "--flow %q: expected SOURCE->TARGET, e.g. A->B", name),
			"quote it in a shell: --flow 'A->B'")
	}
	return src, tgt, nil
}

// resolve turns --flow into Source/Target and checks it agrees with --source/--target.
func (s Selector) resolve() (src, tgt string, err error) {
	src, tgt = s.Source, s.Target
	if s.Flow == "" {
		return src, tgt, nil
	}
	fs, ft, err := ParseName(s.Flow)
	if err != nil {
		return "", "", err
	}
	if (src != "" && src != fs) || (tgt != "" && tgt != ft) {
		return "", "", kerr.New(kerr.Usage, "--flow %s disagrees with --source %s --target %s", s.Flow, orAny(src), orAny(tgt))
	}
	return fs, ft, nil
}

// IsZero reports whether nothing was selected.
func (s Selector) IsZero() bool { return s.Flow == "" && s.Source == "" && s.Target == "" }

func (s Selector) String() string {
	src, tgt, err := s.resolve()
	if err != nil {
		return s.Flow
	}
	return orAny(src) + "->" + orAny(tgt)
}

func orAny(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func (s Selector) matches(f *Flow, src, tgt string) bool {
	return (src == "" || f.Source == src) && (tgt == "" || f.Target == tgt)
}

// One picks the single flow a command acts on: the flow named by the selector, or the only
// enabled flow that matches it. A heartbeats-only flow is picked only when both aliases are
// named. No match or several matches are usage errors (exit 2) naming the candidates.
func One(flows []*Flow, s Selector) (*Flow, error) {
	src, tgt, err := s.resolve()
	if err != nil {
		return nil, err
	}
	var cands []*Flow
	for _, f := range flows {
		if s.matches(f, src, tgt) && (f.Enabled || (src != "" && tgt != "")) {
			cands = append(cands, f)
		}
	}
	switch len(cands) {
	case 1:
		return cands[0], nil
	case 0:
		if s.IsZero() {
			return nil, kerr.New(kerr.Usage, "no enabled flow in the file")
		}
		return nil, kerr.WithHint(kerr.New(kerr.Usage, "no flow %s in the file", s), "flows in the file: "+names(flows, false))
	}
	return nil, kerr.WithHint(kerr.New(kerr.Usage, "several flows match: %s", names(cands, false)), "name one with --flow, e.g. --flow '"+cands[0].Name()+"'")
}

// All returns the flows a command reports on: every flow matching the selector (all flows when
// it is empty); with enabledOnly, heartbeats-only flows are left out. A selector that matches
// nothing is a usage error.
func All(flows []*Flow, s Selector, enabledOnly bool) ([]*Flow, error) {
	src, tgt, err := s.resolve()
	if err != nil {
		return nil, err
	}
	var out []*Flow
	for _, f := range flows {
		if s.matches(f, src, tgt) && (f.Enabled || !enabledOnly) {
			out = append(out, f)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	what := "flow"
	if enabledOnly {
		what = "enabled flow"
	}
	if s.IsZero() {
		return nil, kerr.New(kerr.Usage, "no %s in the file", what)
	}
	return nil, kerr.WithHint(kerr.New(kerr.Usage, "no %s matches --flow %s", what, s), "flows in the file: "+names(flows, enabledOnly))
}

func names(flows []*Flow, enabledOnly bool) string {
	var out []string
	for _, f := range flows {
		if f.Enabled || !enabledOnly {
			out = append(out, f.Name())
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// Reverse returns the flow T->S among flows for flow f (S->T); nil when there is none.
func Reverse(flows []*Flow, f *Flow) *Flow {
	for _, r := range flows {
		if r.Source == f.Target && r.Target == f.Source {
			return r
		}
	}
	return nil
}

// AsEnabled is f as a run asked for it by name runs it: enabled, with offset syncs (`kmm
// replicate FILE --flow 'B->A'` for failback's reverse copy, `kmm failback --start-reverse`),
// though the file may leave it disabled (it drives kmm replicate; MM2 then runs the pair for
// heartbeats only). f itself is not changed. A flow without a topics filter in the file is a
// usage error: it would copy every topic.
func AsEnabled(f *Flow) (*Flow, error) {
	if f.Enabled {
		return f, nil
	}
	r := *f
	r.Enabled, r.EmitOffsetSyncs = true, true
	if r.TopicFilter == nil {
		return nil, kerr.New(kerr.Usage, "flow %s is not enabled and has no topics filter in the file (set %s.topics, or %s.enabled = true)", f.Name(), f.Name(), f.Name())
	}
	r.validated = false
	if err := r.Validate(); err != nil {
		return nil, kerr.Wrap(kerr.Usage, err)
	}
	return &r, nil
}
