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
	At            time.Time    // when these statistics arrived
	QueueMessages int64        // msg_cnt: messages in the producer queue
	QueueBytes    int64        // msg_size
	Brokers       []BrokerStat // sorted by name
	// ConsumerLag is the sum over assigned partitions of librdkafka's consumer_lag: records on
	// the source past the last one handed to kmm (transaction markers excluded); -1 unknown.
	ConsumerLag int64
}

// AnyBrokerAnswering reports whether any broker connection of the client was up and had
// received data within the last d when the statistics were taken (a connection to a hung
// broker stays UP without receiving anything).
func (cs ClientStat) AnyBrokerAnswering(d time.Duration) bool {
	for _, b := range cs.Brokers {
		if b.State == "UP" && b.RxIdle >= 0 && b.RxIdle < d {
			return true
		}
	}
	return false
}

// BrokerStat is one broker connection's statistics.
type BrokerStat struct {
	Name             string
	State            string        // librdkafka broker state: UP, DOWN, CONNECT, AUTH, INIT, TRY_CONNECT, ...
	RxIdle           time.Duration // since the last data received on the connection (-1: none yet)
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
		State    string `json:"state"`
		RxIdle   int64  `json:"rxidle"` // µs, -1 none
		Outbuf   int64  `json:"outbuf_cnt"`
		Waitresp int64  `json:"waitresp_cnt"`
		RTT      struct {
			Avg int64 `json:"avg"`
			P99 int64 `json:"p99"`
		} `json:"rtt"`
	} `json:"brokers"`
	Topics map[string]struct {
		Partitions map[string]struct {
			Partition   int32 `json:"partition"`
			Desired     bool  `json:"desired"`
			ConsumerLag int64 `json:"consumer_lag"`
		} `json:"partitions"`
	} `json:"topics"`
}

// parseStats turns librdkafka's statistics JSON into a ClientStat (bootstrap pseudo-brokers,
// node id -1, are left out).
func parseStats(js, role string) (*ClientStat, error) {
	var r rawStats
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		return nil, err
	}
	cs := &ClientStat{Name: r.Name, Role: role, QueueMessages: r.MsgCnt, QueueBytes: r.MsgSize, At: time.Now(), ConsumerLag: -1}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			if p.Partition < 0 || !p.Desired || p.ConsumerLag < 0 {
				continue
			}
			cs.ConsumerLag = max(cs.ConsumerLag, 0) + p.ConsumerLag
		}
	}
	for _, b := range r.Brokers {
		if b.NodeID < 0 {
			continue
		}
		rx := time.Duration(-1)
		if b.RxIdle >= 0 {
			rx = time.Duration(b.RxIdle) * time.Microsecond
		}
		cs.Brokers = append(cs.Brokers, BrokerStat{Name: b.Name, State: b.State, RxIdle: rx, RTTAvg: time.Duration(b.RTT.Avg) * time.Microsecond,
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

// LinkRTT is the round trip of one client's requests over one librdkafka statistics window:
// the largest average and 99th percentile over its broker connections that sent requests in
// the window (bootstrap connections included: a probe's metadata request may use one).
type LinkRTT struct {
	Avg, P99 time.Duration
	At       time.Time
}

// linkRTT reads LinkRTT from librdkafka's statistics JSON; false when no connection had a
// request answered in the window.
func linkRTT(js string) (LinkRTT, bool) {
	var r struct {
		Brokers map[string]struct {
			RTT struct {
				Avg int64 `json:"avg"`
				P99 int64 `json:"p99"`
				Cnt int64 `json:"cnt"`
			} `json:"rtt"`
		} `json:"brokers"`
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		return LinkRTT{}, false
	}
	out := LinkRTT{At: time.Now()}
	ok := false
	for _, b := range r.Brokers {
		if b.RTT.Cnt <= 0 {
			continue
		}
		ok = true
		out.Avg = max(out.Avg, time.Duration(b.RTT.Avg)*time.Microsecond)
		out.P99 = max(out.P99, time.Duration(b.RTT.P99)*time.Microsecond)
	}
	return out, ok
}

// LinkRTT returns the round trip of the admin client's requests in the newest statistics
// window (NewAdmin with WithLinkRTT); false before the first window with an answered request.
func (a *Admin) LinkRTT() (LinkRTT, bool) {
	if r := a.rtt.Load(); r != nil {
		return *r, true
	}
	return LinkRTT{}, false
}
