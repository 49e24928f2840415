package switchover

import (
	"fmt"
	"strings"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// Verdict is a gate's judgement.
type Verdict string

// Verdicts.
const (
	// Pass: nothing stands in the way.
	Pass Verdict = "pass"
	// Refuse: the command stops before it changes anything (exit 3; exit 2 for a usage gate).
	Refuse Verdict = "refuse"
	// Overridden: the gate would refuse, and the user's override (its Override flag) lets it pass.
	Overridden Verdict = "overridden"
	// Warn: reported, never a refusal (configuration drift, a check that could not run).
	Warn Verdict = "warn"
)

// Gate is one check a DR command makes before it changes anything: what it judged (Inputs, as
// data), its verdict and the problems it reports, one line each. Failover's and failback's
// preflights are lists of gates (Gates), judged in order; the first gate that refuses (or all of
// them, when several do) is the command's error, and nothing has been written then.
//
// To add a gate: a function that reads what it needs and appends its Gate with Gates.judge (or
// Gates.warn), called from the preflight that needs it, and a line in the preflight's test that
// makes it refuse.
type Gate struct {
	Name    string         `json:"name"`
	Verdict Verdict        `json:"verdict"`
	Inputs  map[string]any `json:"inputs,omitempty"`
	// Problems are what the gate found, one line each (empty when it passed).
	Problems []string `json:"problems,omitempty"`
	// Override is the flag that lets a refusal pass (--force, --accept-loss); "" when none does.
	Override string `json:"override,omitempty"`
	// Hint tells the user what to do about a refusal.
	Hint string `json:"hint,omitempty"`
	// Usage: the refusal is a usage error (exit 2): the request names something that does not
	// exist (a group, a flow that cannot be failed over).
	Usage bool `json:"usage,omitempty"`

	// err, when set, is the refusal's own wording (the gate's whole message); otherwise the
	// refusal lists the problems under "preflight failed, nothing was changed".
	err error
}

// Gates are a preflight's gates in the order they were judged.
type Gates []Gate

// judge appends the gate name: refused when it found problems and the user did not pass its
// override, overridden when they did, passed otherwise. It returns the gate for the caller to
// add a hint or its own wording.
func (g *Gates) judge(name string, inputs map[string]any, problems []string, override string, overridden bool) *Gate {
	v := Pass
	if len(problems) > 0 {
		v = Refuse
		if override != "" && overridden {
			v = Overridden
		}
	}
	*g = append(*g, Gate{Name: name, Verdict: v, Inputs: inputs, Problems: problems, Override: override})
	return &(*g)[len(*g)-1]
}

// refuse appends a refused gate with its own error (a usage gate when the error's kind is Usage).
func (g *Gates) refuse(name string, inputs map[string]any, err error) {
	*g = append(*g, Gate{Name: name, Verdict: Refuse, Inputs: inputs, Problems: []string{firstLine(err.Error())}, Usage: kerr.KindOf(err) == kerr.Usage, err: err})
}

// warn appends a gate that only reports.
func (g *Gates) warn(name string, inputs map[string]any, problems []string) {
	v := Pass
	if len(problems) > 0 {
		v = Warn
	}
	*g = append(*g, Gate{Name: name, Verdict: v, Inputs: inputs, Problems: problems})
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// Refused returns the gates that refused.
func (g Gates) Refused() []Gate {
	var out []Gate
	for _, x := range g {
		if x.Verdict == Refuse {
			out = append(out, x)
		}
	}
	return out
}

// Err is the preflight's refusal (nil when no gate refused): a refused usage gate's own error
// (exit 2) first; one refused gate with its own wording, that; otherwise every refused gate's
// problems under "preflight failed, nothing was changed" (exit 3), with their hints.
func (g Gates) Err() error {
	refused := g.Refused()
	if len(refused) == 0 {
		return nil
	}
	for _, r := range refused {
		if r.Usage {
			return r.error()
		}
	}
	if len(refused) == 1 && refused[0].err != nil {
		return refused[0].error()
	}
	var lines, hints []string
	for _, r := range refused {
		for _, p := range r.Problems {
			line := p
			if r.Override != "" && !strings.Contains(p, r.Override) {
				line += " (or " + r.Override + ")"
			}
			lines = append(lines, line)
		}
		if r.Hint != "" {
			hints = append(hints, r.Hint)
		}
	}
	err := kerr.New(kerr.CheckFailed, "preflight failed, nothing was changed:\n  %s", strings.Join(lines, "\n  "))
	if len(hints) > 0 {
		return kerr.WithHint(err, strings.Join(hints, "; "))
	}
	return err
}

func (x Gate) error() error {
	err := x.err
	if err == nil {
		kind := kerr.CheckFailed
		if x.Usage {
			kind = kerr.Usage
		}
		err = kerr.New(kind, "%s", strings.Join(x.Problems, "\n  "))
	}
	if x.Hint != "" && kerr.HintOf(err) == "" {
		err = kerr.WithHint(err, x.Hint)
	}
	return err
}

// String is the gate in one line ("name: verdict: problem; problem").
func (x Gate) String() string {
	s := fmt.Sprintf("%s: %s", x.Name, x.Verdict)
	if len(x.Problems) > 0 {
		s += ": " + strings.Join(x.Problems, "; ")
	}
	return s
}
