package configcmd

import (
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/flow"
)

// overlayIntervals makes the check report's intervals the ones `kmm replicate` uses: the file's
// values, kmm's defaults where the file is silent (flow.Defaults, as replicate and `config
// explain` apply them). MM2's reading of the same file stays beside them (mm2_intervals) when it
// differs, so a reader migrating from MM2 sees both. A file flow.FromMM2 refuses (errors the
// diagnostics already list) keeps MM2's values only.
func overlayIntervals(cfg *mm2conf.Config, rep *mm2conf.CheckReport) {
	flows, err := flow.FromMM2(cfg)
	if err != nil {
		return
	}
	byName := map[string]*flow.Flow{}
	for _, f := range flows {
		byName[f.Name()] = f
	}
	for i := range rep.Flows {
		cf := &rep.Flows[i]
		f := byName[cf.Name]
		if f == nil {
			continue
		}
		mm2 := cf.Intervals
		kmm := mm2
		set := func(dst *int64, d time.Duration) {
			if *dst >= 0 { // a negative interval turns the task off, in both tools
				*dst = d.Milliseconds()
			}
		}
		set(&kmm.RefreshTopicsMs, f.RefreshTopicsInterval)
		set(&kmm.SyncTopicConfigsMs, f.SyncConfigsInterval)
		set(&kmm.SyncTopicACLsMs, f.SyncACLsInterval)
		set(&kmm.EmitCheckpointsMs, f.CheckpointPollInterval)
		set(&kmm.SyncGroupOffsetsMs, f.SyncGroupOffsetsInterval)
		set(&kmm.EmitHeartbeatsMs, f.HeartbeatInterval)
		cf.Intervals = kmm
		if kmm != mm2 {
			cf.MM2Intervals = &mm2
		}
	}
}
