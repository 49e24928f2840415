package switchover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/plan"
)

// KindFence fences the writers of a flow's source topics before the drain: DENY WRITE ACLs
// (method acl) or a user's command (method hook).
const KindFence = "fence-writers"

// Fence methods.
const (
	FenceNone = "none"
	FenceACL  = "acl"
	FenceHook = "hook"
)

// AllPrincipals is the principal of an ACL that matches every principal. With Kafka's
// authorizers DENY beats ALLOW, so "every principal except kmm's own" cannot be written as a
// DENY for all plus an ALLOW for kmm: a DENY for User:* fences every principal that is not a
// super user (super.users skip ACLs altogether). kmm writes nothing to the fenced topics during
// failover; a reverse flow writing into them before failback removes the fence (the Identity
// policy) needs kmm's principal to be a super user, or name the producers' principals instead.
const AllPrincipals = "User:*"

// FenceOptions are the user's fence choice.
type FenceOptions struct {
	Method     string   // none | acl | hook ("" = none)
	Principals []string // acl: the principals denied (User:alice, or User:*)
	Command    string   // hook: run with sh -c
	// HookOut receives the hook's stdout and stderr (default os.Stderr: never kmm's stdout).
	HookOut io.Writer
}

// CheckPrincipal reports whether p is a principal Kafka's ACLs accept ("User:alice", "User:*").
func CheckPrincipal(p string) error {
	typ, name, ok := strings.Cut(p, ":")
	if !ok || typ == "" || name == "" {
		return fmt.Errorf("principal %q is not TYPE:NAME (e.g. User:alice, or User:* for every principal that is not a super user)", p)
	}
	return nil
}

// FenceACLs are the DENY WRITE bindings of an acl fence on the given topics, sorted by topic
// then principal.
func FenceACLs(topics, principals []string) []flowstate.FenceACL {
	var out []flowstate.FenceACL
	for _, t := range topics {
		for _, p := range principals {
			out = append(out, flowstate.FenceACL{Topic: t, PatternType: "LITERAL", Principal: p, Host: "*"})
		}
	}
	return out
}

// ACLBinding is the Kafka binding of a fence ACL.
func ACLBinding(a flowstate.FenceACL) cluster.ACL {
	return cluster.ACL{ResourceType: "TOPIC", ResourceName: a.Topic, PatternType: a.PatternType, Principal: a.Principal, Host: a.Host,
		Operation: "WRITE", Permission: "DENY"}
}

// FenceParams are the Params of a fence-writers step.
type FenceParams struct {
	Method  string               `json:"method"`
	ACLs    []flowstate.FenceACL `json:"acls,omitempty"`
	Command string               `json:"command,omitempty"`
}

func (fo *Failover) topics() []string {
	var ts []string
	for _, tp := range fo.TPs {
		if len(ts) == 0 || ts[len(ts)-1] != tp.Topic {
			ts = append(ts, tp.Topic)
		}
	}
	return ts
}

// fenceStep is the plan step of the chosen fence (nil for none).
func (fo *Failover) fenceStep() (*plan.Step, error) {
	f, o := fo.F, fo.Opt.Fence
	var s plan.Step
	var p FenceParams
	switch o.Method {
	case "", FenceNone:
		return nil, nil
	case FenceACL:
		p = FenceParams{Method: FenceACL, ACLs: FenceACLs(fo.topics(), o.Principals)}
		s = plan.Step{ID: "fence/acl", Kind: KindFence, Cluster: f.Source,
			Writes: fmt.Sprintf("DENY WRITE ACLs on %s: %d topic(s) x %s", f.Source, len(fo.topics()), strings.Join(o.Principals, ", ")),
			Why:    "no producer may write to the source after the cut; kmm failback removes these ACLs", Expect: map[string]int64{"acls": int64(len(p.ACLs))}}
	case FenceHook:
		p = FenceParams{Method: FenceHook, Command: o.Command}
		s = plan.Step{ID: "fence/hook", Kind: KindFence, Cluster: f.Source,
			Writes: fmt.Sprintf("whatever the hook does: sh -c %q (KMM_FLOW, KMM_SOURCE, KMM_TARGET, KMM_SOURCE_BOOTSTRAP, KMM_TOPICS in its environment)", o.Command),
			Why:    "the hook stops the source's writers (e.g. scales the producers to zero); a non-zero exit stops the failover before anything else changed"}
	default:
		return nil, kerr.New(kerr.Usage, "--fence %q: unknown (none, acl or hook)", o.Method)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	s.Params = b
	return &s, nil
}

// fenceRecord is the fence as the flow state records it.
func (fo *Failover) fenceRecord() *flowstate.Fence {
	o := fo.Opt.Fence
	switch o.Method {
	case FenceACL:
		return &flowstate.Fence{Method: FenceACL, Cluster: fo.F.Source, ACLs: FenceACLs(fo.topics(), o.Principals)}
	case FenceHook:
		return &flowstate.Fence{Method: FenceHook, Cluster: fo.F.Source, Command: o.Command}
	}
	return nil
}

type fence struct{ fo *Failover }

func fenceParams(s plan.Step) (FenceParams, error) {
	var p FenceParams
	if err := json.Unmarshal(s.Params, &p); err != nil {
		return p, fmt.Errorf("step %s: params: %w", s.ID, err)
	}
	return p, nil
}

// HasACLs reports whether every fence ACL exists on c.
func HasACLs(ctx context.Context, c cluster.ACLs, acls []flowstate.FenceACL) (bool, int, error) {
	var topics []string
	for _, a := range acls {
		if !slices.Contains(topics, a.Topic) {
			topics = append(topics, a.Topic)
		}
	}
	have, err := c.DescribeTopicACLs(ctx, topics)
	if err != nil {
		return false, 0, err
	}
	set := map[cluster.ACL]bool{}
	for _, h := range have {
		set[h] = true
	}
	n := 0
	for _, a := range acls {
		if set[ACLBinding(a)] {
			n++
		}
	}
	return n == len(acls), n, nil
}

func (a fence) Check(ctx context.Context, s plan.Step) (bool, error) {
	p, err := fenceParams(s)
	if err != nil || p.Method != FenceACL {
		return false, err // a hook is run again unless the journal says it completed
	}
	ok, _, err := HasACLs(ctx, a.fo.Src, p.ACLs)
	return ok, err
}

func (a fence) Apply(ctx context.Context, s plan.Step) (map[string]int64, error) {
	p, err := fenceParams(s)
	if err != nil {
		return nil, err
	}
	switch p.Method {
	case FenceACL:
		bs := make([]cluster.ACL, len(p.ACLs))
		for i, x := range p.ACLs {
			bs[i] = ACLBinding(x)
		}
		if err := a.fo.Src.CreateACLs(ctx, bs); err != nil {
			return nil, kerr.WithHint(fmt.Errorf("fencing %s with DENY WRITE ACLs: %w", a.fo.F.Source, err),
				"kmm's principal on the source needs ALTER on the cluster to create ACLs, and the brokers need an authorizer (authorizer.class.name)")
		}
		return map[string]int64{"acls": int64(len(bs))}, nil
	case FenceHook:
		return nil, RunFenceHook(ctx, a.fo.F, a.fo.topics(), p.Command, a.fo.Opt.Fence.HookOut)
	}
	return nil, fmt.Errorf("step %s: unknown fence method %q", s.ID, p.Method)
}

// RunFenceHook runs a fence hook with sh -c, the flow in its environment (KMM_FLOW,
// KMM_SOURCE, KMM_TARGET, KMM_SOURCE_BOOTSTRAP, KMM_TOPICS comma-separated); its output goes to
// out (stderr by default). A non-zero exit is a refused precondition (exit 3).
func RunFenceHook(ctx context.Context, f *flow.Flow, topics []string, command string, out io.Writer) error {
	if out == nil {
		out = os.Stderr
	}
	c := exec.CommandContext(ctx, "sh", "-c", command)
	c.Stdout, c.Stderr = out, out
	c.Env = append(os.Environ(), "KMM_FLOW="+f.Name(), "KMM_SOURCE="+f.Source, "KMM_TARGET="+f.Target,
		"KMM_SOURCE_BOOTSTRAP="+f.SourceBootstrap, "KMM_TOPICS="+strings.Join(topics, ","))
	if err := c.Run(); err != nil {
		if ctx.Err() != nil {
			return kerr.Wrap(kerr.Interrupted, ctx.Err())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return kerr.New(kerr.CheckFailed, "fence hook %q exited with status %d: the failover stopped before anything else changed", command, ee.ExitCode())
		}
		return kerr.New(kerr.CheckFailed, "fence hook %q: %v: the failover stopped before anything else changed", command, err)
	}
	return nil
}
