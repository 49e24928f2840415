package snapshot

import (
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/mm2wire"
)

type heartbeat struct {
	src, tgt string
	ts       time.Time
}

func decodeHeartbeat(r cluster.Record) (heartbeat, error) {
	hb, err := mm2wire.DecodeHeartbeat(r.Key, r.Value)
	if err != nil {
		return heartbeat{}, err
	}
	return heartbeat{src: hb.SourceClusterAlias, tgt: hb.TargetClusterAlias, ts: time.UnixMilli(hb.Timestamp)}, nil
}

func isSourcePosition(r cluster.Record, cluster string) bool {
	k, err := mm2wire.DecodeSourceOffsetKey(r.Key)
	return err == nil && k.Connector == mm2wire.SourceConnectorName && k.Cluster == cluster
}
