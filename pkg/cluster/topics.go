package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// EnsureTopic creates topic t on a if it does not exist and waits until its partitions are
// visible. It returns whether it created it. rfKey, if set, names the setting that controls the
// replication factor, for the hint when the cluster has too few brokers.
func EnsureTopic(ctx context.Context, a Admin, t NewTopic, rfKey string) (bool, error) {
	ts, err := a.ListTopics(ctx)
	if err != nil {
		return false, err
	}
	if _, ok := ts[t.Name]; ok {
		return false, nil
	}
	res, err := a.CreateTopics(ctx, []NewTopic{t})
	if err != nil {
		return false, err
	}
	if err := res[t.Name]; err != nil && !errors.Is(err, ErrTopicExists) {
		err = fmt.Errorf("%s: creating topic %s (replication factor %d): %w", a.Name(), t.Name, t.RF, err)
		if rfKey != "" {
			err = kerr.WithHint(err, fmt.Sprintf("if the cluster has fewer brokers than %d, set %s (use -1 for the broker default)", t.RF, rfKey))
		}
		return false, err
	}
	return true, WaitPartitions(ctx, a, t.Name, t.Partitions)
}

// WaitPartitions waits up to 30 s until topic name shows at least n partitions in a's metadata.
func WaitPartitions(ctx context.Context, a Admin, name string, n int) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ts, err := a.ListTopics(ctx)
		if err == nil && ts[name].Partitions >= n {
			return nil
		}
		if time.Now().After(deadline) {
			e := fmt.Errorf("%s: topic %s did not show %d partitions within 30s (last error: %v)", a.Name(), name, n, err)
			return kerr.WithHint(e, fmt.Sprintf("a topic that exists but never shows is one the principal kmm uses on %s may not DESCRIBE: grant it ALLOW DESCRIBE on topic %s (docs/security.md)", a.Name(), name))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
