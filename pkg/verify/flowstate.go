package verify

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/plan"
)

// FlowState is the durable state of a flow as `kmm failover`/`failback` record it in
// __kmm_state on the target (key flow/<S>-><T>).
type FlowState struct {
	Version int    `json:"v"`
	State   string `json:"state"` // REPLICATING, FAILING_OVER, FAILED_OVER, FAILING_BACK
	Epoch   int64  `json:"epoch"`
	Since   string `json:"since,omitempty"`
}

// FlowStateReader reads a flow's state; found is false when none was ever recorded.
type FlowStateReader interface {
	FlowState(ctx context.Context, tgt cluster.Cluster, flowName string) (st FlowState, found bool, err error)
}

// StateTopicReader reads the flow record of __kmm_state (the newest value of its key).
type StateTopicReader struct{}

// FlowState implements FlowStateReader.
func (StateTopicReader) FlowState(ctx context.Context, tgt cluster.Cluster, flowName string) (FlowState, bool, error) {
	recs, err := plan.ReadState(ctx, tgt)
	if err != nil {
		return FlowState{}, false, err
	}
	v, ok := recs[plan.FlowKey(flowName)]
	if !ok || v == nil {
		return FlowState{}, false, nil
	}
	var st FlowState
	if err := json.Unmarshal(v, &st); err != nil {
		return FlowState{}, false, fmt.Errorf("%s on cluster %s: key %s: %w", plan.StateTopic, tgt.Alias(), plan.FlowKey(flowName), err)
	}
	return st, true, nil
}
