// Package netfault puts a fault-injection proxy (toxiproxy, in-process) between a test's
// clients and one test-bed cluster, and adds or removes network faults ("toxics") on it.
//
// scripts/testbed.sh gives every cluster a PROXIED listener on base+7 that advertises base+8.
// Start runs a toxiproxy proxy on base+8 forwarding to base+7, so a client bootstrapped at
// Proxy.Bootstrap goes through the proxy for its bootstrap connection and every connection the
// metadata leads it to. The PLAINTEXT listener (Cluster.Bootstrap) never goes through it: the
// test's own checker reads the clusters there, unaffected by the faults.
//
// One proxy per cluster at a time (the advertised port is fixed): tests that use it must not
// run in parallel with each other. Shared by the fault suite (e2e/faults_test.go) and the WAN
// benchmarks.
package netfault

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"

	"github.com/kmmproject/kmm/e2e/testbed"
)

// Listener offsets from a cluster's base port (scripts/testbed.sh).
const (
	ProxiedListenerOffset = 7 // the broker's PROXIED listener
	AdvertisedOffset      = 8 // what PROXIED advertises: where the proxy listens
)

// Proxy is one running toxiproxy proxy in front of a cluster.
type Proxy struct {
	Cluster   testbed.Cluster
	Bootstrap string // give this to the client under test
	p         *toxiproxy.Proxy
	n         int
}

// Start runs the proxy for cluster c until the test ends. It fails the test when the broker
// has no PROXIED listener (a bed started before the listener existed: `scripts/testbed.sh
// down; scripts/testbed.sh up` rewrites server.properties).
func Start(t testing.TB, c testbed.Cluster) *Proxy {
	t.Helper()
	host, port, err := net.SplitHostPort(c.Bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := strconv.Atoi(port)
	upstream := net.JoinHostPort(host, strconv.Itoa(base+ProxiedListenerOffset))
	listen := net.JoinHostPort(host, strconv.Itoa(base+AdvertisedOffset))
	if conn, err := net.DialTimeout("tcp", upstream, 2*time.Second); err != nil {
		t.Fatalf("cluster %s has no PROXIED listener on %s (%v): restart the bed (scripts/testbed.sh down; scripts/testbed.sh up) so it gets one", c.Name, upstream, err)
	} else {
		conn.Close()
	}
	// toxiproxy logs through zerolog's global logger too (a trace line per chunk in the
	// bandwidth toxic): off in tests.
	zerolog.SetGlobalLevel(zerolog.Disabled)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "kafka-"+c.Name, listen, upstream)
	if err := srv.Collection.Add(p, true); err != nil {
		t.Fatalf("proxy %s -> %s for cluster %s: %v", listen, upstream, c.Name, err)
	}
	t.Cleanup(p.Stop)
	return &Proxy{Cluster: c, Bootstrap: listen, p: p}
}

// Toxic is one fault: a toxiproxy toxic type and its attributes. Stream is "downstream"
// (broker -> client, the default) or "upstream" (client -> broker).
type Toxic struct {
	Type       string
	Stream     string
	Attributes map[string]int64
}

// Latency delays every chunk from the broker to the client (responses) by ms.
func Latency(ms int64) Toxic {
	return Toxic{Type: "latency", Attributes: map[string]int64{"latency": ms}}
}

// Bandwidth caps the rate of one direction to kbPerSecond KB/s.
func Bandwidth(stream string, kbPerSecond int64) Toxic {
	return Toxic{Type: "bandwidth", Stream: stream, Attributes: map[string]int64{"rate": kbPerSecond}}
}

// Blackhole drops everything in one direction and never closes the connection (timeout 0).
func Blackhole(stream string) Toxic {
	return Toxic{Type: "timeout", Stream: stream, Attributes: map[string]int64{"timeout": 0}}
}

// Reset closes every connection with a TCP RST on its next data.
func Reset() Toxic { return Toxic{Type: "reset_peer", Attributes: map[string]int64{"timeout": 0}} }

// Add installs the toxics (on open connections and new ones) and returns the function that
// removes them again (idempotent; also run when the test ends).
func (p *Proxy) Add(t testing.TB, toxics ...Toxic) (remove func()) {
	t.Helper()
	var names []string
	for _, tx := range toxics {
		p.n++
		name := fmt.Sprintf("%s-%d", tx.Type, p.n)
		stream := tx.Stream
		if stream == "" {
			stream = "downstream"
		}
		var attrs []string
		for k, v := range tx.Attributes {
			attrs = append(attrs, fmt.Sprintf("%q:%d", k, v))
		}
		js := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":{%s}}`, name, tx.Type, stream, strings.Join(attrs, ","))
		if _, err := p.p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			t.Fatalf("adding toxic %s to the proxy of %s: %v", js, p.Cluster.Name, err)
		}
		names = append(names, name)
	}
	done := false
	remove = func() {
		if done {
			return
		}
		done = true
		for _, n := range names {
			_ = p.p.Toxics.RemoveToxic(context.Background(), n)
		}
	}
	t.Cleanup(remove)
	return remove
}
