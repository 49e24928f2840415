package rdkafka

import (
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
	return &Cluster{Admin: a, alias: alias, bootstrap: bootstrap, consumer: consumer, producer: producer, opts: opts}, nil
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

// NewScanReader opens a reader for long sequential scans (kmm verify --level full): the side's
// consumer settings with a bounded prefetch (8 MiB per reader) and no Nagle delay, each only
// where the file sets none, so several readers at once stay within a small memory budget; always
// read_committed (aborted records and transaction markers are not data).
func (c *Cluster) NewScanReader() (cluster.Reader, error) {
	cfg := merge(Config{"isolation.level": "read_committed"}, c.consumer, map[string]string{"queued.max.messages.kbytes": "8192", "queued.min.messages": "10000",
		"fetch.queue.backoff.ms": "10", "socket.nagle.disable": "true"})
	r, err := NewConsumer(c.Name(), cfg)
	if err != nil {
		return nil, err
	}
	return r, nil
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
