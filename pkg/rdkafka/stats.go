package rdkafka

import (
	"encoding/json"
	"sort"
	"sync/atomic"
	"time"
)

// ClientStat is the part of librdkafka's statistics (statistics.interval.ms) kmm exports.
type ClientStat struct {
	Name          string       // librdkafka client name
	Role          string       // "source-consumer", "target-producer"
	QueueMessages int64        // msg_cnt: messages in the producer queue
	QueueBytes    int64        // msg_size
	Brokers       []BrokerStat // sorted by name
}

// BrokerStat is one broker connection's statistics.
type BrokerStat struct {
	Name             string
	RTTAvg, RTTP99   time.Duration
	OutbufRequests   int64
	WaitrespRequests int64
}

type rawStats struct {
	Name    string `json:"name"`
	MsgCnt  int64  `json:"msg_cnt"`
	MsgSize int64  `json:"msg_size"`
	Brokers map[string]struct {
		Name     string `json:"name"`
		NodeID   int    `json:"nodeid"`
		Outbuf   int64  `json:"outbuf_cnt"`
		Waitresp int64  `json:"waitresp_cnt"`
		RTT      struct {
			Avg int64 `json:"avg"`
			P99 int64 `json:"p99"`
		} `json:"rtt"`
	} `json:"brokers"`
}

// parseStats turns librdkafka's statistics JSON into a ClientStat (bootstrap pseudo-brokers,
// node id -1, are left out).
func parseStats(js, role string) (*ClientStat, error) {
	var r rawStats
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		return nil, err
	}
	cs := &ClientStat{Name: r.Name, Role: role, QueueMessages: r.MsgCnt, QueueBytes: r.MsgSize}
	for _, b := range r.Brokers {
		if b.NodeID < 0 {
			continue
		}
		cs.Brokers = append(cs.Brokers, BrokerStat{Name: b.Name, RTTAvg: time.Duration(b.RTT.Avg) * time.Microsecond,
			RTTP99: time.Duration(b.RTT.P99) * time.Microsecond, OutbufRequests: b.Outbuf, WaitrespRequests: b.Waitresp})
	}
	sort.Slice(cs.Brokers, func(i, j int) bool { return cs.Brokers[i].Name < cs.Brokers[j].Name })
	return cs, nil
}

// statsHolder keeps the newest statistics of one client.
type statsHolder struct{ p atomic.Pointer[ClientStat] }

func (h *statsHolder) set(js, role string) {
	if cs, err := parseStats(js, role); err == nil {
		h.p.Store(cs)
	}
}
