package rdkafka

import (
	"context"
	"strconv"
	"sync"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
)

// Cluster is one side of a flow opened with librdkafka: an Admin, and readers and producers
// made with that side's consumer and producer settings. It implements cluster.Cluster.
type Cluster struct {
	*Admin
	alias, bootstrap   string
	consumer, producer Config
	opts               []Option // given to every client of the side (problem reporting)

	// Group offset calls go through a pool of admin clients (see groupAdmin).
	adminCfg Config
	poolMu   sync.Mutex
	pool     []*Admin // every client of the pool but the main one
	idle     chan *Admin
}

// groupAdmins bounds the admin clients a Cluster uses at once for group offset calls.
// librdkafka runs one group-coordinator request at a time per client: listing and altering one
// group's offsets took 8.4 ms per group with 1, 8 or 32 concurrent callers on one client, and
// 1.9 ms per group with 8 callers on 8 clients (measured on the local bed).
const groupAdmins = 8

// groupAdmin takes an admin client for a group-coordinator call: the main one or another idle
// one, or a new one while fewer than groupAdmins exist; otherwise it waits for one. A caller
// alone (every command but failover's concurrent commit steps) only ever gets the main one.
func (c *Cluster) groupAdmin(ctx context.Context) (*Admin, error) {
	select {
	case a := <-c.idle:
		return a, nil
	default:
	}
	c.poolMu.Lock()
	if len(c.pool)+1 < groupAdmins {
		a, err := NewAdmin("cluster "+c.alias, c.adminCfg, c.opts...)
		if err == nil {
			c.pool = append(c.pool, a)
		}
		c.poolMu.Unlock()
		return a, err
	}
	c.poolMu.Unlock()
	select {
	case a := <-c.idle:
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Cluster) putGroupAdmin(a *Admin) { c.idle <- a }

// ListGroupOffsets implements cluster.Groups through the pool of admin clients.
func (c *Cluster) ListGroupOffsets(ctx context.Context, group string) (map[TP]OffsetMeta, error) {
	a, err := c.groupAdmin(ctx)
	if err != nil {
		return nil, err
	}
	defer c.putGroupAdmin(a)
	return a.ListGroupOffsets(ctx, group)
}

// AlterGroupOffsets implements cluster.Groups through the pool of admin clients.
func (c *Cluster) AlterGroupOffsets(ctx context.Context, group string, offsets map[TP]OffsetMeta) error {
	a, err := c.groupAdmin(ctx)
	if err != nil {
		return err
	}
	defer c.putGroupAdmin(a)
	return a.AlterGroupOffsets(ctx, group, offsets)
}

// Close closes the Cluster's admin clients (readers and producers are closed by their users).
func (c *Cluster) Close() {
	c.poolMu.Lock()
	pool := c.pool
	c.pool = nil
	c.poolMu.Unlock()
	for _, a := range pool {
		a.Close()
	}
	c.Admin.Close()
}

var (
	_ cluster.Cluster  = (*Cluster)(nil)
	_ cluster.Reader   = (*Consumer)(nil)
	_ cluster.Producer = (*Producer)(nil)
	_ cluster.Opener   = Opener{}
)

// NewCluster creates the admin client of cluster alias; readers and producers are created on
// demand with consumer and producer settings. opts apply to the admin client and to every
// reader and producer made from the Cluster.
func NewCluster(alias, bootstrap string, admin, consumer, producer Config, opts ...Option) (*Cluster, error) {
	a, err := NewAdmin("cluster "+alias, admin, opts...)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Admin: a, alias: alias, bootstrap: bootstrap, consumer: consumer, producer: producer, opts: opts,
		adminCfg: admin, idle: make(chan *Admin, groupAdmins)}
	c.idle <- a
	return c, nil
}

// Alias is the cluster's alias in the MM2 file.
func (c *Cluster) Alias() string { return c.alias }

// Bootstrap is the cluster's bootstrap servers (for messages).
func (c *Cluster) Bootstrap() string { return c.bootstrap }

// NewReader opens an assign-mode consumer with the side's consumer settings.
func (c *Cluster) NewReader() (cluster.Reader, error) {
	r, err := NewConsumer(c.Name(), c.consumer, c.opts...)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// NewScanReader opens a reader for long sequential scans of one partition (kmm verify --level
// full) with the side's consumer settings bounded by ScanReaderSettings to prefetch bytes.
func (c *Cluster) NewScanReader(prefetch int) (cluster.Reader, error) {
	r, err := NewConsumer(c.Name(), ScanReaderSettings(c.consumer, prefetch), withLogBuffer(256))
	if err != nil {
		return nil, err
	}
	return r, nil
}

// MinScanPrefetch is the least prefetch a scan reader gets (one default-sized fetch).
const MinScanPrefetch = 1 << 20

// ScanReaderSettings are the settings of a reader that scans one partition within a memory
// budget of prefetch bytes (at least MinScanPrefetch): librdkafka's local queue
// (queued.max.messages.kbytes) and the bytes one fetch may bring (fetch.max.bytes,
// max.partition.fetch.bytes) are capped to it whatever the file sets, since a file tuned for
// replication (50 MB fetches, 16 MB queues) would otherwise multiply by the readers open at
// once; fetch.wait.max.ms is at most 10 ms; always read_committed (aborted records and
// transaction markers are not data); no Nagle delay and a short fetch backoff where the file
// sets none. A record larger than the budget is still read (librdkafka returns the first record
// of a fetch whatever its size).
func ScanReaderSettings(consumer Config, prefetch int) Config {
	prefetch = max(prefetch, MinScanPrefetch)
	capped := func(name string, def, limit int) string { return strconv.Itoa(min(atoiOr(consumer[name], def), limit)) }
	cfg := merge(Config{
		"isolation.level":            "read_committed",
		"queued.max.messages.kbytes": capped("queued.max.messages.kbytes", 65536, prefetch/1024),
		"max.partition.fetch.bytes":  capped("max.partition.fetch.bytes", 1048576, prefetch),
		// A scan reads up to an end it knows: a long poll at a log's end only delays the next
		// partition of a reused reader (librdkafka has one fetch in flight per broker, and the
		// broker holds one at the end of the previous partition for fetch.wait.max.ms, 500 ms
		// by default: measured 500 ms per reused partition against 40-65 ms).
		"fetch.wait.max.ms": capped("fetch.wait.max.ms", 500, 10),
	}, consumer, map[string]string{"queued.min.messages": "10000", "fetch.queue.backoff.ms": "10", "socket.nagle.disable": "true"})
	if _, set := consumer["fetch.max.bytes"]; set {
		// librdkafka refuses a fetch.max.bytes below message.max.bytes when it is set.
		msgMax := atoiOr(consumer["message.max.bytes"], 1000000)
		cfg["fetch.max.bytes"] = strconv.Itoa(max(msgMax, min(atoiOr(consumer["fetch.max.bytes"], 52428800), prefetch)))
	} // unset, librdkafka caps it to queued.max.messages.kbytes itself
	return cfg
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n > 0 {
		return n
	}
	return def
}

// NewProducer opens a producer with the side's producer settings and overrides on top.
func (c *Cluster) NewProducer(overrides map[string]string) (cluster.Producer, error) {
	p, err := NewProducer(c.Name(), merge(overrides, c.producer), c.opts...)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Opener opens the sides of flows with librdkafka, with each flow's role settings
// (source-admin, target-consumer, ...). It is what pkg/app hands commands.
type Opener struct{}

// Open implements cluster.Opener.
func (Opener) Open(f *flow.Flow, side flow.Side) (cluster.Cluster, error) {
	c, err := NewCluster(f.Alias(side), f.Bootstrap(side), f.Settings(side, flow.Admin), f.Settings(side, flow.Consumer), f.Settings(side, flow.Producer))
	if err != nil {
		return nil, err
	}
	return c, nil
}
