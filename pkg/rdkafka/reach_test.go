package rdkafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

func TestReachability(t *testing.T) {
	cases := []struct {
		err    error
		kind   string
		detail string
	}{
		{&LogError{Level: 3, Tag: "FAIL", Msg: "127.0.0.1:29292/bootstrap: Connect to ipv4#127.0.0.1:29292 failed: Connection refused (after 0ms in state CONNECT, 11 identical error(s) suppressed)"},
			"connection refused", "Connect to ipv4#127.0.0.1:29292 failed: Connection refused"},
		{&LogError{Level: 3, Tag: "FAIL", Msg: "[thrd:127.0.0.1:29292/1]: 127.0.0.1:29292/1: Connect to ipv4#127.0.0.1:29292 failed: Connection refused (after 0ms in state CONNECT)"},
			"connection refused", "Connect to ipv4#127.0.0.1:29292 failed: Connection refused"},
		// A group consumer's coordinator connection names itself first.
		{&LogError{Level: 3, Tag: "FAIL", Msg: "GroupCoordinator: 127.0.0.1:29292: Connect to ipv4#127.0.0.1:29292 failed: Connection refused (after 0ms in state CONNECT)"},
			"connection refused", "Connect to ipv4#127.0.0.1:29292 failed: Connection refused"},
		{kafka.NewError(kafka.ErrTransport, "127.0.0.1:29292/1: Connect to ipv4#127.0.0.1:29292 failed: Connection refused (after 1ms in state CONNECT)", false),
			"connection refused", "Connect to ipv4#127.0.0.1:29292 failed: Connection refused"},
		{kafka.NewError(kafka.ErrResolve, "nohost:9092/bootstrap: Failed to resolve 'nohost:9092': Name or service not known (after 3ms in state CONNECT)", false),
			"DNS", "Failed to resolve 'nohost:9092': Name or service not known"},
		{&LogError{Level: 3, Tag: "FAIL", Msg: "127.0.0.1:29295/bootstrap: SSL handshake failed: error:0A000086:SSL routines::certificate verify failed (after 4ms in state SSL_HANDSHAKE)"},
			"TLS", "SSL handshake failed: error:0A000086:SSL routines::certificate verify failed"},
		{kafka.NewError(kafka.ErrAuthentication, "sasl_plaintext://127.0.0.1:29294/bootstrap: SASL authentication error: Authentication failed: Invalid username or password (after 5ms in state AUTH_REQ)", false),
			"SASL", "SASL authentication error: Authentication failed: Invalid username or password"},
		{kafka.NewError(kafka.ErrAllBrokersDown, "1/1 brokers are down", false), "all brokers down", "1/1 brokers are down"},
		{fmt.Errorf("cluster B: list offsets: %w", kafka.NewError(kafka.ErrTransport, "Local: Broker transport failure", false)), "connection lost", "Local: Broker transport failure"},
		{kafka.NewError(kafka.ErrTimedOut, "Local: Timed out", false), "timeout", "Local: Timed out"},
	}
	for _, c := range cases {
		r, ok := Reachability(c.err)
		if !ok || r.Kind != c.kind || r.Detail != c.detail {
			t.Errorf("Reachability(%v) = %+v, %v; want kind %q detail %q", c.err, r, ok, c.kind, c.detail)
		}
	}
	for _, err := range []error{
		nil,
		errors.New("topic x: replication factor larger than available brokers"),
		kafka.NewError(kafka.ErrTopicAuthorizationFailed, "Broker: Topic authorization failed", false),
		kafka.NewError(kafka.ErrMsgSizeTooLarge, "Broker: Message size too large", false),
		context.Canceled,
		&LogError{Level: 4, Tag: "CONFWARN", Msg: "Configuration property x is deprecated"},
	} {
		if r, ok := Reachability(err); ok {
			t.Errorf("Reachability(%v) = %+v, want not a reachability problem", err, r)
		}
	}
	if got := (Reach{Kind: "connection refused", Detail: "Connect to ipv4#h:1 failed: Connection refused"}).String(); got != "connection refused: Connect to ipv4#h:1 failed: Connection refused" {
		t.Errorf("String() = %q", got)
	}
}

func TestParseStatsBrokerStateAndConsumerLag(t *testing.T) {
	js := `{"name":"c1","msg_cnt":0,"msg_size":0,
	 "brokers":{"127.0.0.1:1/bootstrap":{"name":"127.0.0.1:1/bootstrap","nodeid":-1,"state":"UP"},
	            "127.0.0.1:1/1":{"name":"127.0.0.1:1/1","nodeid":1,"state":"DOWN","rxidle":100,"rtt":{"avg":1000,"p99":2000}}},
	 "topics":{"t":{"partitions":{"0":{"partition":0,"desired":true,"consumer_lag":5},
	                              "1":{"partition":1,"desired":true,"consumer_lag":-1},
	                              "-1":{"partition":-1,"desired":false,"consumer_lag":-1}}}}}`
	cs, err := parseStats(js, "source-consumer")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Brokers) != 1 || cs.Brokers[0].State != "DOWN" || cs.AnyBrokerAnswering(time.Second) {
		t.Errorf("brokers %+v: want one broker, DOWN (the bootstrap pseudo-broker left out)", cs.Brokers)
	}
	if cs.ConsumerLag != 5 {
		t.Errorf("consumer lag %d, want 5", cs.ConsumerLag)
	}
	cs, _ = parseStats(`{"name":"p","brokers":{"b/1":{"name":"b/1","nodeid":1,"state":"UP","rxidle":300000}}}`, "target-producer")
	if !cs.AnyBrokerAnswering(time.Second) || cs.ConsumerLag != -1 {
		t.Errorf("%+v: want a broker answering and an unknown consumer lag", cs)
	}
	// Up but silent for 8 s (a hung broker keeps its connections): not answering.
	cs, _ = parseStats(`{"name":"p","brokers":{"b/1":{"name":"b/1","nodeid":1,"state":"UP","rxidle":8000000}}}`, "target-producer")
	if cs.AnyBrokerAnswering(5 * time.Second) {
		t.Errorf("%+v: a connection silent for 8 s counts as answering", cs)
	}
}

// blackhole accepts TCP connections and never answers, like a broker behind a dead link.
func blackhole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 100) // kept open, never read
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case conns <- c:
			default:
				c.Close()
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		close(conns)
		for c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// A metadata request to a cluster that never answers returns when the caller's context ends,
// and closing the client then does not wait for the request's own (long) timeout.
func TestAdminCallsAndCloseDoNotWaitForADeadCluster(t *testing.T) {
	var problems atomic.Int64
	a, err := NewAdmin("cluster X", Config{"bootstrap.servers": blackhole(t)}, WithProblems(func(error) { problems.Add(1) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err = a.ListTopics(ctx)
	if err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("ListTopics on a cancelled context: %v after %s", err, time.Since(start))
	}
	pctx, pcancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, pcancel)
	if _, err := a.Probe(pctx, time.Minute); err == nil {
		t.Fatal("probe of a dead cluster succeeded")
	}
	start = time.Now()
	a.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close waited %s for abandoned metadata requests", d)
	}
	if _, err := a.ListTopics(context.Background()); err == nil {
		t.Fatal("ListTopics after Close succeeded")
	}
}

// A producer holding records for a cluster that never answers closes at once with
// CloseWithin(0), reporting how many it discarded.
func TestProducerCloseWithinDiscards(t *testing.T) {
	p, err := NewProducer("cluster X", Config{"bootstrap.servers": blackhole(t)}, WithProblems(func(error) {}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := p.ProduceSync(ctx, []Record{{Topic: "t", Partition: 0, Value: []byte("v")}, {Topic: "t", Partition: 0, Value: []byte("w")}}); err == nil {
		t.Fatal("produce to a dead cluster succeeded")
	}
	start := time.Now()
	if n := p.CloseWithin(0); n < 2 {
		t.Errorf("CloseWithin discarded %d record(s), want 2 (or more counted events)", n)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("CloseWithin(0) took %s", d)
	}
}
