// Package wanlink is the test bed's WAN profile (issues 16 and 20): a toxiproxy link (Shopify's
// fault-injection proxy, run in-process) in front of a cluster's PROXIED listener, adding latency
// (and optionally a bandwidth limit) to both directions. scripts/testbed.sh gives every cluster a
// PLAINTEXT listener named WAN bound on base+7 that advertises base+8; the link listens on
// base+8, so a client bootstrapped there reaches the cluster (metadata included) only through
// the link. Used by scripts/bench's WAN rows, the e2e WAN tests and `scripts/testbed.sh wan`.
package wanlink

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Base ports of the bed's clusters (scripts/testbed.sh's base_port), before
// KMM_TESTBED_PORT_OFFSET; the Go side's one copy (e2e/testbed and scripts/bench read it here).
var basePorts = map[string]int{"A": 19092, "B": 29092, "C": 14092}

// BasePort is the PLAINTEXT port of the bed's cluster c (A, B or C) at offset 0; 0 for another name.
func BasePort(c string) int { return basePorts[strings.ToUpper(c)] }

// PortOffset is KMM_TESTBED_PORT_OFFSET (0 when unset or invalid).
func PortOffset() int {
	n, err := strconv.Atoi(os.Getenv("KMM_TESTBED_PORT_OFFSET"))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Addrs returns the broker's PROXIED listener (upstream) and the advertised address the link
// listens on, for cluster c (A, B or C) of the bed at offset off.
func Addrs(c string, off int) (upstream, listen string, err error) {
	p, ok := basePorts[strings.ToUpper(c)]
	if !ok {
		return "", "", fmt.Errorf("unknown cluster %q (known: A B C)", c)
	}
	p += off
	return "127.0.0.1:" + strconv.Itoa(p+7), "127.0.0.1:" + strconv.Itoa(p+8), nil
}

// Link is one running proxy.
type Link struct {
	Cluster  string
	Listen   string // clients bootstrap here (the PROXIED listener's advertised address)
	Upstream string
	proxy    *toxiproxy.Proxy
	mu       sync.Mutex
	oneWay   time.Duration
	kbps     int64
}

var (
	serverOnce sync.Once
	server     *toxiproxy.ApiServer
)

func apiServer() *toxiproxy.ApiServer {
	serverOnce.Do(func() {
		server = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.New(io.Discard))
	})
	return server
}

// Start runs a link in front of cluster c's PROXIED listener (bed at KMM_TESTBED_PORT_OFFSET) that
// delays each direction by oneWay (round trip 2×oneWay). It fails when the port is taken (another
// link of this bed is running).
func Start(c string, oneWay time.Duration) (*Link, error) {
	up, listen, err := Addrs(c, PortOffset())
	if err != nil {
		return nil, err
	}
	return StartAt(c, listen, up, oneWay)
}

// StartAt is Start with explicit addresses.
func StartAt(name, listen, upstream string, oneWay time.Duration) (*Link, error) {
	p := toxiproxy.NewProxy(apiServer(), "wan-"+name+"-"+listen, listen, upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("wan link %s: listen on %s: %w", name, listen, err)
	}
	l := &Link{Cluster: name, Listen: listen, Upstream: upstream, proxy: p}
	if err := l.SetLatency(oneWay); err != nil {
		p.Stop()
		return nil, err
	}
	return l, nil
}

// wanLatency is toxiproxy's latency toxic with a deep buffer, registered as "wan_latency".
// The stock one holds at most 1,024 chunks (one per read from the socket, often a few KB) while
// it delays them, and when its buffer backs up it shortens the delay of the chunks behind: with
// 50 ms each way it held a produce stream to ~12 MB/s and stretched its round trip to 137-265
// ms, or (chained ten times) let the round trip fall to 59-75 ms. This one delays every chunk to
// exactly its read time + Latency and holds up to wanBuffer chunks: a link, not a bottleneck.
type wanLatency struct {
	Latency int64 `json:"latency"` // ms
}

const wanBuffer = 1 << 16

func (t *wanLatency) GetBufferSize() int { return wanBuffer }

func (t *wanLatency) Pipe(stub *toxics.ToxicStub) {
	d := time.Duration(t.Latency) * time.Millisecond
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if wait := time.Until(c.Timestamp.Add(d)); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-stub.Interrupt:
					stub.Output <- c // never drop data
					return
				}
			}
			stub.Output <- c
		}
	}
}

func init() { toxics.Register("wan_latency", new(wanLatency)) }

// SetLatency changes the one-way latency of both directions (0 removes it). Connections already
// open get the new value too.
func (l *Link) SetLatency(oneWay time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, dir := range []string{"upstream", "downstream"} {
		name := "latency_" + dir
		if l.proxy.Toxics.GetToxic(name) != nil {
			if err := l.proxy.Toxics.RemoveToxic(context.Background(), name); err != nil {
				return fmt.Errorf("wan link %s: %w", l.Cluster, err)
			}
		}
		if oneWay <= 0 {
			continue
		}
		js := fmt.Sprintf(`{"name":%q,"type":"wan_latency","stream":%q,"attributes":{"latency":%d}}`, name, dir, oneWay.Milliseconds())
		if _, err := l.proxy.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			return fmt.Errorf("wan link %s: add latency: %w", l.Cluster, err)
		}
	}
	l.oneWay = oneWay
	return nil
}

// SetBandwidth limits each direction to kbps kilobytes per second (0 removes the limit).
func (l *Link) SetBandwidth(kbps int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, dir := range []string{"upstream", "downstream"} {
		name := "bandwidth_" + dir
		if l.proxy.Toxics.GetToxic(name) != nil {
			if err := l.proxy.Toxics.RemoveToxic(context.Background(), name); err != nil {
				return fmt.Errorf("wan link %s: %w", l.Cluster, err)
			}
		}
		if kbps <= 0 {
			continue
		}
		js := fmt.Sprintf(`{"name":%q,"type":"bandwidth","stream":%q,"attributes":{"rate":%d}}`, name, dir, kbps)
		if _, err := l.proxy.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
			return fmt.Errorf("wan link %s: add bandwidth: %w", l.Cluster, err)
		}
	}
	l.kbps = kbps
	return nil
}

// OneWay is the latency currently added to each direction.
func (l *Link) OneWay() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.oneWay
}

// Close stops the link and closes its connections.
func (l *Link) Close() { l.proxy.Stop() }

// Probe dials the link and returns how long a TCP connect took (a sanity check that it runs).
func (l *Link) Probe() (time.Duration, error) {
	t := time.Now()
	c, err := net.DialTimeout("tcp", l.Listen, 5*time.Second)
	if err != nil {
		return 0, err
	}
	_ = c.Close()
	return time.Since(t), nil
}
