package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/plan"
)

// FlowState is the durable state of a flow as `kmm failover`/`failback` record it in
// __kmm_state (key flow/<S>-><T>, a versioned JSON record; see pkg/flowstate once it lands):
// REPLICATING (or no record), FAILING_OVER, FAILED_OVER, FAILING_BACK.
type FlowState struct {
	Version int       `json:"v"`
	Type    string    `json:"type"`
	State   string    `json:"state"`
	Epoch   int64     `json:"epoch"`
	At      time.Time `json:"at"`
	Mode    string    `json:"mode,omitempty"`
	By      string    `json:"by,omitempty"`
}

// flowStateVersion is the newest record format this reader knows.
const flowStateVersion = 1

// FlowStateReader reads a flow's state from the given clusters (the target first, then the
// source when reachable); found is false when none was ever recorded.
type FlowStateReader interface {
	FlowState(ctx context.Context, clusters []cluster.Cluster, flowName string) (st FlowState, found bool, err error)
}

// StateTopicReader reads the flow record of each cluster's __kmm_state (the newest value of its
// key) and keeps the copy with the highest epoch, as failover writes the record to the target
// always and to the source when it can.
type StateTopicReader struct{}

// FlowState implements FlowStateReader.
func (StateTopicReader) FlowState(ctx context.Context, clusters []cluster.Cluster, flowName string) (FlowState, bool, error) {
	// Each cluster's read costs a client and a round trip or two: they run at once.
	type read struct {
		recs map[string][]byte
		err  error
	}
	reads := make([]read, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reads[i].recs, reads[i].err = plan.ReadState(ctx, c)
		}()
	}
	wg.Wait()
	var best FlowState
	found := false
	for i, c := range clusters {
		recs, err := reads[i].recs, reads[i].err
		if err != nil {
			return FlowState{}, false, err
		}
		v, ok := recs[plan.FlowKey(flowName)]
		if !ok || v == nil {
			continue
		}
		var st FlowState
		if err := json.Unmarshal(v, &st); err != nil {
			return FlowState{}, false, fmt.Errorf("%s on cluster %s: key %s: %w", plan.StateTopic, c.Alias(), plan.FlowKey(flowName), err)
		}
		if st.Version > flowStateVersion {
			return FlowState{}, false, fmt.Errorf("%s on cluster %s: key %s has format version %d, this kmm reads up to %d: upgrade kmm",
				plan.StateTopic, c.Alias(), plan.FlowKey(flowName), st.Version, flowStateVersion)
		}
		if !found || st.Epoch > best.Epoch {
			best, found = st, true
		}
	}
	return best, found, nil
}
