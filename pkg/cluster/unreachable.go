package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// UnreachableError is a cluster that did not answer, in words that name it once:
// "cluster A (127.0.0.1:9092): connection refused", "cluster B (b1:9092,b2:9092): no answer
// within 10s (last error: ...)". pkg/rdkafka's Ping returns it (as kerr.Unreachable); Named
// keeps it as it is instead of naming the cluster a second time.
type UnreachableError struct {
	Name      string // "cluster A"
	Bootstrap string // bootstrap.servers as configured
	Cause     string // "connection refused", "no answer within 10s (...)"
}

func (e *UnreachableError) Error() string {
	if e.Bootstrap == "" {
		return e.Name + ": " + e.Cause
	}
	return e.Name + " (" + e.Bootstrap + "): " + e.Cause
}

// Named returns err naming cluster alias and its bootstrap servers once: as it is when it
// already names them (an *UnreachableError in its chain), else prefixed "cluster ALIAS
// (BOOTSTRAP): ". Its kind and hint are err's.
func Named(alias, bootstrap string, err error) error {
	if err == nil {
		return nil
	}
	var ue *UnreachableError
	if errors.As(err, &ue) {
		return err
	}
	return fmt.Errorf("cluster %s (%s): %w", alias, bootstrap, err)
}

// Cause is what err says beyond the cluster's name: the Cause of an *UnreachableError in its
// chain, else err's text (for messages that name the cluster themselves).
func Cause(err error) string {
	if err == nil {
		return ""
	}
	var ue *UnreachableError
	if errors.As(err, &ue) {
		return ue.Cause
	}
	return err.Error()
}

// JoinUnreachable is the errors of several clusters that did not answer as one, their messages
// on one line separated by "; " (nil for none, the error itself for one).
func JoinUnreachable(errs ...error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return unreachables(errs)
}

// unreachables are several clusters that did not answer: one line naming each.
type unreachables []error

func (u unreachables) Error() string {
	parts := make([]string, len(u))
	for i, e := range u {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

func (u unreachables) Unwrap() []error { return u }

// OpenAll opens the given sides of f and pings them at once (each within timeout), so that
// clusters that do not answer cost one wait, not one each. When any does not answer, the others
// are closed and the error (kerr.Unreachable, exit 4) names every cluster that did not, each
// once, with a hint that starts with need ("planned failover needs both clusters"; "" for
// none) and names their bootstrap.servers keys. An error opening a client (a bad setting:
// kerr.Usage) is returned as it is.
func OpenAll(ctx context.Context, open Opener, f *flow.Flow, timeout time.Duration, need string, sides ...flow.Side) ([]Cluster, error) {
	cs := make([]Cluster, len(sides))
	errs := make([]error, len(sides))
	var wg sync.WaitGroup
	for i, side := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := open.Open(f, side)
			if err != nil {
				errs[i] = err
				return
			}
			if _, err := c.Ping(ctx, timeout); err != nil {
				c.Close()
				errs[i] = err
				return
			}
			cs[i] = c
		}()
	}
	wg.Wait()
	var bad []error
	var aliases []string
	for i, err := range errs {
		if err == nil {
			continue
		}
		if kerr.KindOf(err) == kerr.Usage || errors.Is(err, context.Canceled) {
			closeAll(cs)
			return nil, err
		}
		bad = append(bad, Named(f.Alias(sides[i]), f.Bootstrap(sides[i]), err))
		aliases = append(aliases, f.Alias(sides[i]))
	}
	if len(bad) == 0 {
		return cs, nil
	}
	closeAll(cs)
	return nil, kerr.WithHint(kerr.Wrap(kerr.Unreachable, JoinUnreachable(bad...)), UnreachableHint(need, aliases...))
}

// UnreachableHint is the hint of clusters that did not answer: need (what the command needs,
// may be empty), then what to check, naming each cluster's bootstrap.servers key.
func UnreachableHint(need string, aliases ...string) string {
	keys := make([]string, len(aliases))
	for i, a := range aliases {
		keys[i] = a + ".bootstrap.servers"
	}
	h := "check " + joinAnd(keys) + ", the network path and the security settings (kmm config explain FILE bootstrap.servers 'security.*')"
	if need != "" {
		h = need + "; " + h
	}
	return h
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func closeAll(cs []Cluster) {
	for _, c := range cs {
		if c != nil {
			c.Close()
		}
	}
}
