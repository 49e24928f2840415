package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
	return WaitAllPartitions(ctx, a, map[string]int{name: n})
}

// WaitAllPartitions waits until every topic of want shows at least its number of partitions in
// a's metadata, one metadata request per try for all of them (a flow of thousands of topics asked
// once per topic spent most of its start there). It fails after 30 s plus 10 ms per partition
// waited for in which no more of them showed: a broker shows new partitions once it has created
// their logs, ~3 ms each on the test bed, and 10,000 of them at once took 32 s.
func WaitAllPartitions(ctx context.Context, a Admin, want map[string]int) error {
	total := 0
	for _, n := range want {
		total += n
	}
	quiet := 30*time.Second + time.Duration(total)*10*time.Millisecond
	deadline, seen := time.Now().Add(quiet), -1
	for {
		ts, err := a.ListTopics(ctx)
		missing, shown := "", 0
		for _, name := range slices.Sorted(maps.Keys(want)) {
			if err != nil {
				missing = name
				break
			}
			shown += min(ts[name].Partitions, want[name])
			if missing == "" && ts[name].Partitions < want[name] {
				missing = name
			}
		}
		if missing == "" {
			return nil
		}
		if shown > seen {
			deadline, seen = time.Now().Add(quiet), shown
		}
		if time.Now().After(deadline) {
			e := fmt.Errorf("%s: topic %s did not show %d partitions within %s (last error: %v)", a.Name(), missing, want[missing], quiet.Round(time.Second), err)
			return kerr.WithHint(e, fmt.Sprintf("a topic that exists but never shows is one the principal kmm uses on %s may not DESCRIBE: grant it ALLOW DESCRIBE on topic %s (docs/security.md)", a.Name(), missing))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
