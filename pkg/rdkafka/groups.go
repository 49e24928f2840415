package rdkafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// ListGroups lists the cluster's consumer groups.
func (a *Admin) ListGroups(ctx context.Context) ([]GroupListing, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.ListConsumerGroups(ctx)
	if err != nil {
		return nil, a.wrap("list groups", err)
	}
	if len(res.Errors) > 0 {
		return nil, a.wrap("list groups", res.Errors[0])
	}
	out := make([]GroupListing, 0, len(res.Valid))
	for _, g := range res.Valid {
		out = append(out, GroupListing{ID: g.GroupID, State: g.State.String(), Simple: g.IsSimpleConsumerGroup})
	}
	return out, nil
}

// DescribeGroups describes groups (state and member count).
func (a *Admin) DescribeGroups(ctx context.Context, ids ...string) ([]GroupDescription, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.DescribeConsumerGroups(ctx, ids)
	if err != nil {
		return nil, a.wrap("describe groups", err)
	}
	out := make([]GroupDescription, 0, len(res.ConsumerGroupDescriptions))
	for _, d := range res.ConsumerGroupDescriptions {
		gd := GroupDescription{ID: d.GroupID, State: d.State.String(), Members: len(d.Members)}
		for _, m := range d.Members {
			gd.Who = append(gd.Who, GroupMember{ClientID: m.ClientID, Host: m.Host, MemberID: m.ConsumerID})
		}
		if d.Error.Code() != kafka.ErrNoError {
			gd.Err = d.Error
		}
		out = append(out, gd)
	}
	return out, nil
}

// ListGroupOffsets returns the committed offsets of a group (all partitions it has).
func (a *Admin) ListGroupOffsets(ctx context.Context, group string) (map[TP]OffsetMeta, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	var res kafka.ListConsumerGroupOffsetsResult
	err := retryCoordinator(ctx, func() (err error) {
		res, err = a.a.ListConsumerGroupOffsets(ctx, []kafka.ConsumerGroupTopicPartitions{{Group: group}}, kafka.SetAdminRequireStableOffsets(false))
		return err
	})
	if IsCode(err, kafka.ErrGroupIDNotFound) {
		return map[TP]OffsetMeta{}, nil // a group that does not exist has no committed offsets
	}
	if err != nil {
		return nil, a.wrap("list offsets of group "+group, err)
	}
	out := map[TP]OffsetMeta{}
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, p := range g.Partitions {
			if p.Error != nil {
				return nil, a.wrap("list offsets of group "+group, p.Error)
			}
			m := ""
			if p.Metadata != nil {
				m = *p.Metadata
			}
			out[TP{Topic: *p.Topic, Partition: p.Partition}] = OffsetMeta{Offset: int64(p.Offset), Metadata: m}
		}
	}
	return out, nil
}

// AlterGroupOffsets commits offsets for a group that has no active members.
func (a *Admin) AlterGroupOffsets(ctx context.Context, group string, offsets map[TP]OffsetMeta) error {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	parts := make([]kafka.TopicPartition, 0, len(offsets))
	for tp, om := range offsets {
		topic, md := tp.Topic, om.Metadata
		parts = append(parts, kafka.TopicPartition{Topic: &topic, Partition: tp.Partition, Offset: kafka.Offset(om.Offset), Metadata: &md})
	}
	err := retryCoordinator(ctx, func() error { // the same offsets again: safe to repeat
		res, err := a.a.AlterConsumerGroupOffsets(ctx, []kafka.ConsumerGroupTopicPartitions{{Group: group, Partitions: parts}})
		if err != nil {
			return err
		}
		for _, g := range res.ConsumerGroupsTopicPartitions {
			for _, p := range g.Partitions {
				if p.Error != nil {
					return p.Error
				}
			}
		}
		return nil
	})
	if err != nil {
		return a.wrap("alter offsets of group "+group, err)
	}
	return nil
}

// DeleteGroups deletes groups that have no active members; a group that does not exist is not
// an error.
func (a *Admin) DeleteGroups(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.DeleteConsumerGroups(ctx, ids)
	if err != nil {
		return a.wrap("delete groups", err)
	}
	for _, g := range res.ConsumerGroupResults {
		switch g.Error.Code() {
		case kafka.ErrNoError, kafka.ErrGroupIDNotFound:
		default:
			return a.wrap("delete group "+g.Group, g.Error)
		}
	}
	return nil
}

// ListOffsets returns, per partition, the offset for spec (earliest, latest, or the first offset
// whose timestamp ≥ spec when spec is a timestamp).
func (a *Admin) ListOffsets(ctx context.Context, tps []TP, spec OffsetSpec) (map[TP]OffsetResult, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	if len(tps) <= offsetsPerCall {
		return a.listOffsets(ctx, tps, spec)
	}
	// librdkafka matches each partition of a ListOffsets answer against the request by a linear
	// search (rd_kafka_ListOffsets_response_merge): quadratic, ~0.4 CPU-s for 10,000 partitions,
	// and the replicator asks twice a second. In calls of offsetsPerCall partitions the same
	// answer costs 1/40 of that. One call at a time: four in flight on one client, while
	// partitions were still unknown to it (just created), crashed the process with SIGSEGV in
	// rd_kafka_ListOffsets (librdkafka 2.11.1, e2e TestManyPartitions, 2026-12-07).
	out := make(map[TP]OffsetResult, len(tps))
	for from := 0; from < len(tps); from += offsetsPerCall {
		res, err := a.listOffsets(ctx, tps[from:min(from+offsetsPerCall, len(tps))], spec)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, res)
	}
	return out, nil
}

// offsetsPerCall: Admin.ListOffsets asks librdkafka for at most offsetsPerCall partitions per
// call.
const offsetsPerCall = 250

// listOffsets is ListOffsets in one librdkafka call, retried while the cause is transient.
func (a *Admin) listOffsets(ctx context.Context, tps []TP, spec OffsetSpec) (map[TP]OffsetResult, error) {
	req := make(map[kafka.TopicPartition]kafka.OffsetSpec, len(tps))
	var s kafka.OffsetSpec
	switch spec {
	case Earliest:
		s = kafka.EarliestOffsetSpec
	case Latest:
		s = kafka.LatestOffsetSpec
	case MaxTimestamp:
		s = kafka.MaxTimestampOffsetSpec
	default:
		s = kafka.NewOffsetSpecForTimestamp(int64(spec))
	}
	for _, tp := range tps {
		t := tp.Topic
		req[kafka.TopicPartition{Topic: &t, Partition: tp.Partition}] = s
	}
	var lastErr error
	for backoff := 50 * time.Millisecond; ; backoff *= 2 {
		a.metaMu.RLock()
		res, err := a.a.ListOffsets(ctx, req, kafka.SetAdminIsolationLevel(kafka.IsolationLevelReadUncommitted))
		a.metaMu.RUnlock()
		if err == nil {
			out := make(map[TP]OffsetResult, len(res.ResultInfos))
			for tp, info := range res.ResultInfos {
				if info.Error.Code() != kafka.ErrNoError {
					err = fmt.Errorf("%s[%d]: %w", *tp.Topic, tp.Partition, info.Error)
					break
				}
				out[TP{Topic: *tp.Topic, Partition: tp.Partition}] = OffsetResult{Offset: int64(info.Offset), Timestamp: info.Timestamp}
			}
			if err == nil {
				return out, nil
			}
		}
		lastErr = err
		if !retriable(err) && !IsCode(err, kafka.ErrUnknownPartition) && !strings.Contains(err.Error(), "leader") {
			break
		}
		{
			// librdkafka checks partitions against its metadata cache: refresh it, the
			// partitions may have just been created.
			seen := map[string]bool{}
			for _, tp := range tps {
				if !seen[tp.Topic] {
					seen[tp.Topic] = true
					t := tp.Topic
					a.metaMu.Lock()
					_, _ = a.a.GetMetadata(&t, false, 5000)
					a.metaMu.Unlock()
				}
			}
		}
		if backoff > time.Second {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return nil, a.wrap("list offsets", fmt.Errorf("%w (gave up: %v)", lastErr, ctx.Err()))
		case <-time.After(backoff):
		}
	}
	return nil, a.wrap("list offsets", lastErr)
}

// retriable reports errors that clear up by themselves (leadership moving, metadata not yet
// propagated after a topic was created, coordinators loading).
func retriable(err error) bool {
	var ke kafka.Error
	if !errors.As(err, &ke) {
		return false
	}
	switch ke.Code() {
	case kafka.ErrNotLeaderForPartition, kafka.ErrLeaderNotAvailable, kafka.ErrUnknownTopicOrPart,
		kafka.ErrNotCoordinator, kafka.ErrCoordinatorLoadInProgress, kafka.ErrCoordinatorNotAvailable,
		kafka.ErrOffsetNotAvailable, kafka.ErrFencedLeaderEpoch, kafka.ErrUnknownLeaderEpoch:
		return true
	}
	return ke.IsRetriable()
}

// DeleteRecords deletes the records of tp before offset `before` (advances the log start).
func (a *Admin) DeleteRecords(ctx context.Context, tp TP, before int64) error {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	t := tp.Topic
	res, err := a.a.DeleteRecords(ctx, []kafka.TopicPartition{{Topic: &t, Partition: tp.Partition, Offset: kafka.Offset(before)}})
	if err != nil {
		return a.wrap("delete records", err)
	}
	for _, r := range res.DeleteRecordsResults {
		if r.TopicPartition.Error != nil {
			return a.wrap("delete records", r.TopicPartition.Error)
		}
	}
	return nil
}

// coordinatorMoving are the answers of a broker whose group coordinator is moving or loading:
// librdkafka's admin calls do not retry them (its consumers do).
var coordinatorMoving = []kafka.ErrorCode{kafka.ErrNotCoordinator, kafka.ErrCoordinatorNotAvailable, kafka.ErrCoordinatorLoadInProgress}

// retryCoordinator runs f again while it fails because the group's coordinator is moving or
// loading, with a growing pause (100 ms to 1 s), until ctx ends; it returns f's last error.
func retryCoordinator(ctx context.Context, f func() error) error {
	pause := 100 * time.Millisecond
	for {
		err := f()
		moving := false
		for _, c := range coordinatorMoving {
			moving = moving || IsCode(err, c)
		}
		if !moving {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, time.Second)
	}
}
