// Package rdkafka is kmm's only importer of confluent-kafka-go (librdkafka). It builds clients
// from plain librdkafka property maps, drains delivery reports, classifies errors into kmm's
// error kinds, and exposes the admin operations later commands need as plain Go types. It must
// not read configuration files, print, or decide policy.
package rdkafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// The value types of the cluster seam (pkg/cluster), under their historical names here.
type (
	TP               = cluster.TP
	Header           = cluster.Header
	Record           = cluster.Record
	TopicInfo        = cluster.TopicInfo
	NewTopic         = cluster.NewTopic
	ConfigSource     = cluster.ConfigSource
	ConfigEntry      = cluster.ConfigEntry
	ConfigOp         = cluster.ConfigOp
	ACL              = cluster.ACL
	GroupListing     = cluster.GroupListing
	GroupDescription = cluster.GroupDescription
	GroupMember      = cluster.GroupMember
	OffsetMeta       = cluster.OffsetMeta
	OffsetSpec       = cluster.OffsetSpec
	OffsetResult     = cluster.OffsetResult
)

// Config sources and offset specs (pkg/cluster's).
const (
	SourceDynamicTopic         = cluster.SourceDynamicTopic
	SourceDynamicBroker        = cluster.SourceDynamicBroker
	SourceDynamicDefaultBroker = cluster.SourceDynamicDefaultBroker
	SourceStaticBroker         = cluster.SourceStaticBroker
	SourceDefault              = cluster.SourceDefault
	SourceUnknown              = cluster.SourceUnknown

	Earliest     = cluster.Earliest
	Latest       = cluster.Latest
	MaxTimestamp = cluster.MaxTimestamp
)

// LibraryVersion returns librdkafka's version as an int and a string.
func LibraryVersion() (int, string) { return kafka.LibraryVersion() }

// Config is a librdkafka property map (already translated from Java names).
type Config map[string]string

func (c Config) configMap(extra map[string]string) *kafka.ConfigMap {
	m := kafka.ConfigMap{}
	for k, v := range c {
		m[k] = typed(k, v)
	}
	for k, v := range extra {
		if _, set := m[k]; !set {
			m[k] = typed(k, v)
		}
	}
	return &m
}

// KafkaConfigMap converts settings to confluent-kafka-go's map (the Go client's own "go.*"
// properties typed), for tools that must drive librdkafka themselves (the benchmark's ceiling).
func KafkaConfigMap(c Config) *kafka.ConfigMap { return c.configMap(nil) }

// typed converts the Go client's own "go.*" properties, which must not be strings.
func typed(k, v string) kafka.ConfigValue {
	if !strings.HasPrefix(k, "go.") {
		return v
	}
	if b, err := strconv.ParseBool(v); err == nil {
		return b
	}
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	return v
}

// adminConsumer is the setting of the consumer an admin client is derived from (NewAdmin): a
// group of kmm's own that never joins, no commits, and a small Events channel for its errors.
var adminConsumer = map[string]string{"group.id": "kmm-admin", "enable.auto.commit": "false",
	"go.events.channel.enable": "true", "go.events.channel.size": "1000"}

// producerChannels bound the Go client's channels of every producer kmm creates (admin clients:
// adminConsumer). Its defaults, 1,000,000 entries each, allocate 24 MB of channel
// buffers per producer up front: untouched, they cost no RSS themselves, but the garbage
// collector counts them as live heap and lets garbage grow to twice that before it runs.
// With the dozen producers and admin clients of `kmm replicate` the Go heap reached ~500 MB
// before each collection (docs/benchmarks.md). kmm never uses ProduceChannel; delivery
// reports beyond the Events channel wait in librdkafka, where queue.buffering.max.messages
// counts them. (The Copier's producers keep the default Events channel: see CopierSettings.)
var producerChannels = map[string]string{
	"go.events.channel.size":  "10000",
	"go.produce.channel.size": "1000",
}

// failFast are defaults that make an unreachable cluster fail in seconds instead of hanging.
var failFast = map[string]string{
	"socket.connection.setup.timeout.ms": "5000",
	"reconnect.backoff.max.ms":           "2000",
}

// Classify maps a librdkafka error to a kmm error kind: unreachable/auth/TLS → kerr.Unreachable,
// context cancellation stays as is, everything else → kerr.Failure. The message is kept.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ke kafka.Error
	if errors.As(err, &ke) {
		switch ke.Code() {
		case kafka.ErrAllBrokersDown, kafka.ErrTransport, kafka.ErrResolve, kafka.ErrTimedOut,
			kafka.ErrAuthentication, kafka.ErrSaslAuthenticationFailed, kafka.ErrSsl,
			kafka.ErrClusterAuthorizationFailed, kafka.ErrTopicAuthorizationFailed,
			kafka.ErrGroupAuthorizationFailed:
			return kerr.Wrap(kerr.Unreachable, err)
		}
	}
	return err
}

// IsCode reports whether err is a librdkafka error with the given code name, e.g.
// "TOPIC_ALREADY_EXISTS" (kafka.ErrorCode.String()).
func IsCode(err error, code kafka.ErrorCode) bool {
	var ke kafka.Error
	return errors.As(err, &ke) && ke.Code() == code
}

// Admin wraps a librdkafka admin client.
type Admin struct {
	rtt atomic.Pointer[LinkRTT] // WithLinkRTT: the newest statistics' round trips
	// metaMu: ListOffsets calls share it, the metadata refresh of their retry path holds it
	// alone. librdkafka 2.11.1 crashed with several calls in flight and refreshes beside them
	// (listOffsets); which of the two it does not survive is not known, so neither happens.
	metaMu  sync.RWMutex
	a       *kafka.AdminClient
	parent  *kafka.Consumer // the handle the admin client is derived from
	timeout time.Duration
	name    string

	// Blocking librdkafka calls that cannot be interrupted (metadata) run in a goroutine the
	// caller stops waiting for when its context ends. The handle is destroyed by Close, or,
	// when such calls are still running then, by the last of them as it ends: never under a
	// call, and Close never waits for one.
	mu        sync.Mutex
	inflight  int
	closed    bool
	destroyed bool
	lastFail  string // the last error librdkafka logged, to name the cause of "no answer"
	// refused: librdkafka reported a connection refused (Ping then checks whether every
	// bootstrap address refuses, to fail fast); bootstrap is bootstrap.servers.
	refused   bool
	bootstrap string
}

// NewAdmin creates an admin client for one cluster. name labels errors ("cluster A").
func NewAdmin(name string, cfg Config, opts ...Option) (*Admin, error) {
	o := collect(opts)
	// The admin's librdkafka logs never go raw to stderr: they go to the caller's handler if
	// any, and the last error is kept for Ping to name the real cause (connection refused,
	// DNS failure, TLS or SASL failure) of a cluster that does not answer.
	var adm *Admin
	user := o.problems
	o.problems = func(err error) {
		var le *LogError
		isLog := errors.As(err, &le)
		refused := false
		if r, ok := Reachability(err); ok && r.Kind == "connection refused" {
			refused = true
		}
		if (isLog && le.Level <= 3 || refused) && adm != nil {
			adm.mu.Lock()
			if isLog && le.Level <= 3 {
				adm.lastFail = le.Msg
			}
			adm.refused = adm.refused || refused
			adm.mu.Unlock()
		}
		if user != nil {
			user(err)
		}
	}
	// The admin client is derived from a consumer with a group.id, never subscribed: a
	// standalone admin client (or one derived from a producer) has no consumer group handle,
	// and librdkafka (2.11 to at least 2.15) dereferences that handle when a broker answers
	// OffsetFetch (ListConsumerGroupOffsets) with NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE,
	// as brokers do while a group coordinator moves or loads: the process died with SIGSEGV on
	// librdkafka's thread, no Go trace (TestListGroupOffsetsNotCoordinator). With the handle,
	// librdkafka re-queries the coordinator of kmm's own idle group and the call returns the
	// error. The group never joins (DESCRIBE on GROUP kmm- PREFIXED covers its coordinator
	// lookup, as for kmm's readers: docs/security.md). The consumer's events (errors only: it
	// fetches nothing) come through a small Events channel; its logs through the log channel.
	cfg = withLogChannel(merge(cfg, failFast, adminConsumer))
	if o.rttStats > 0 {
		cfg = merge(cfg, map[string]string{"statistics.interval.ms": strconv.FormatInt(max(o.rttStats.Milliseconds(), 100), 10)})
	}
	p, err := kafka.NewConsumer(cfg.configMap(nil))
	if err != nil {
		return nil, kerr.Wrap(kerr.Usage, fmt.Errorf("%s: invalid client configuration: %w", name, err))
	}
	a, err := kafka.NewAdminClientFromConsumer(p)
	if err != nil {
		startDrain(name, p.Logs(), cfg, nil)
		p.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	adm = &Admin{a: a, parent: p, timeout: 30 * time.Second, name: name, bootstrap: cfg["bootstrap.servers"]}
	go func() {
		for ev := range p.Events() {
			switch e := ev.(type) {
			case kafka.Error:
				o.problems(e)
			case *kafka.Stats:
				if r, ok := linkRTT(e.String()); ok {
					adm.rtt.Store(&r)
				}
			}
		}
	}()
	startDrain(name, p.Logs(), cfg, o.problems)
	return adm, nil
}

// threadPrefix is librdkafka's "[thrd:...]: " at the start of a log line.
var threadPrefix = regexp.MustCompile(`^\[thrd:[^\]]*\]: `)

// LastError is the last error librdkafka logged for this client ("" if none), e.g.
// "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused".
func (a *Admin) LastError() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastFail
}

// Close releases the client. It does not wait for metadata calls still running in the
// background (abandoned by callers whose context ended): the last of them releases the client
// when it ends, within its own timeout.
func (a *Admin) Close() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	now := a.inflight == 0
	a.destroyed = now
	a.mu.Unlock()
	if now {
		a.destroy()
	}
}

func (a *Admin) destroy() {
	a.a.Close()
	if a.parent != nil {
		a.parent.Close()
	}
}

// detached runs f (a blocking librdkafka call bounded by its own timeout) so that the caller
// can stop waiting when ctx ends; f keeps the handle alive until it returns.
func (a *Admin) detached(ctx context.Context, f func() error) error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return fmt.Errorf("%s: client closed", a.name)
	}
	a.inflight++
	a.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		err := f()
		a.mu.Lock()
		a.inflight--
		last := a.closed && a.inflight == 0 && !a.destroyed
		a.destroyed = a.destroyed || last
		a.mu.Unlock()
		if last {
			a.destroy()
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Name is the label given at creation.
func (a *Admin) Name() string { return a.name }

func (a *Admin) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, a.timeout)
}

func (a *Admin) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return Classify(fmt.Errorf("%s: %s: %w", a.name, op, err))
}

// Ping asks for cluster metadata and returns the cluster id. A cluster that does not answer
// gives a kerr.Unreachable error wrapping a *cluster.UnreachableError ("cluster A
// (127.0.0.1:9092): connection refused") within timeout; one where every bootstrap address
// refuses connections (nothing listens there: no broker can answer) within about a second
// (refusedAfter), so that an operator is not kept waiting for a cluster that is plainly down.
func (a *Admin) Ping(ctx context.Context, timeout time.Duration) (string, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go a.watchRefusal(rctx, stop, timeout)
	var id string
	err := a.detached(rctx, func() (err error) {
		// ClusterID only waits for metadata the client asks for by itself, and when that
		// arrives between its check and its wait it waits for the next refresh, a second later
		// (measured: 1.0 s in about half of the starts, 20-30 ms otherwise). A metadata request
		// of our own first, within the same bound, makes the id known when ClusterID looks.
		if dl, ok := rctx.Deadline(); ok {
			_, _ = a.a.GetMetadata(nil, false, int(max(time.Until(dl).Milliseconds(), 1)))
		}
		id, err = a.a.ClusterID(rctx)
		return err
	})
	if err != nil {
		if errors.Is(parent.Err(), context.Canceled) {
			return "", parent.Err() // interrupted: not the cluster's fault
		}
		if errors.Is(context.Cause(rctx), errAllRefused) {
			return "", a.unreachable("connection refused")
		}
		// A deadline of the caller's (shorter or equal to timeout) is the cluster not answering too.
		if errors.Is(err, context.DeadlineExceeded) || parent.Err() != nil {
			cause := "librdkafka reported no error"
			if last := a.LastError(); last != "" {
				cause = "last error: " + cleanDetail(last)
			}
			return "", a.unreachable(fmt.Sprintf("no answer within %s (%s)", timeout, cause))
		}
		if kerr.KindOf(Classify(err)) != kerr.Unreachable {
			return "", a.wrap("cluster id", err)
		}
		return "", a.unreachable(cleanDetail(err.Error()))
	}
	return id, nil
}

// unreachable is Ping's error: kerr.Unreachable, naming the cluster and its bootstrap servers
// once, with a hint.
func (a *Admin) unreachable(cause string) error {
	return kerr.WithHint(kerr.Wrap(kerr.Unreachable, &cluster.UnreachableError{Name: a.name, Bootstrap: a.bootstrap, Cause: cause}),
		"check bootstrap.servers, the network path and the security settings of this cluster")
}

var errAllRefused = errors.New("every bootstrap address refuses connections")

// refusedAfter is how long every bootstrap address must have been refusing before Ping gives
// up on a cluster: long enough for a broker that is starting to open its port, short enough
// that a cluster that is down is reported within 2 s.
const refusedAfter = time.Second

// watchRefusal ends a Ping (stop with errAllRefused) once librdkafka has reported a connection
// refused and, refusedAfter after the Ping started, every bootstrap address refuses a TCP
// connection. An address that accepts (a broker, or anything that listens: the TLS and SASL
// handshakes, and a broker that does not answer, are librdkafka's to judge within the Ping's
// bound), does not answer the dial, or fails otherwise (DNS) ends the watch with the Ping
// going on. Healthy clusters are never dialled: librdkafka reported no refusal.
func (a *Admin) watchRefusal(ctx context.Context, stop context.CancelCauseFunc, timeout time.Duration) {
	if timeout <= refusedAfter {
		return
	}
	addrs := bootstrapAddrs(a.bootstrap)
	if len(addrs) == 0 {
		return
	}
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		a.mu.Lock()
		refused := a.refused
		a.mu.Unlock()
		if !refused || time.Since(start) < refusedAfter {
			continue
		}
		if allRefuse(ctx, addrs) {
			stop(errAllRefused)
		}
		return
	}
}

// allRefuse dials each address once and reports whether every one refused the connection.
func allRefuse(ctx context.Context, addrs []string) bool {
	var d net.Dialer
	for _, addr := range addrs {
		dctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		c, err := d.DialContext(dctx, "tcp", addr)
		cancel()
		if err == nil {
			c.Close()
			return false
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return false
		}
	}
	return true
}

// bootstrapAddrs are the host:port addresses of a bootstrap.servers list (librdkafka's forms:
// host:port, host (port 9092), [v6]:port, and a leading PROTOCOL://).
func bootstrapAddrs(servers string) []string {
	var out []string
	for _, s := range strings.Split(servers, ",") {
		s = strings.TrimSpace(s)
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[i+3:]
		}
		if s == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(s); err != nil {
			s = net.JoinHostPort(strings.Trim(s, "[]"), "9092")
		}
		out = append(out, s)
	}
	return out
}

// Probe asks the cluster for its broker list (a metadata request for no topic) and returns
// the number of brokers. It fails within timeout, or when ctx ends, if no broker answers.
func (a *Admin) Probe(ctx context.Context, timeout time.Duration) (int, error) {
	var n int
	err := a.detached(ctx, func() error {
		md, err := a.a.GetMetadata(nil, false, int(max(timeout.Milliseconds(), 1)))
		if err == nil {
			n = len(md.Brokers)
		}
		return err
	})
	if err != nil {
		return 0, a.wrap("metadata", err)
	}
	return n, nil
}

// ListTopics returns all topics of the cluster (metadata request).
func (a *Admin) ListTopics(ctx context.Context) (map[string]TopicInfo, error) {
	tmo := a.timeout
	if d, ok := ctx.Deadline(); ok {
		tmo = time.Until(d)
	}
	if tmo <= 0 {
		return nil, a.wrap("metadata", context.DeadlineExceeded)
	}
	var md *kafka.Metadata
	err := a.detached(ctx, func() (err error) {
		md, err = a.a.GetMetadata(nil, true, int(max(tmo.Milliseconds(), 1)))
		return err
	})
	if err != nil {
		return nil, a.wrap("metadata", err)
	}
	out := make(map[string]TopicInfo, len(md.Topics))
	for name, t := range md.Topics {
		if t.Error.Code() == kafka.ErrUnknownTopicOrPart {
			continue
		}
		rf := 0
		if len(t.Partitions) > 0 {
			rf = len(t.Partitions[0].Replicas)
		}
		out[name] = TopicInfo{Name: name, Partitions: len(t.Partitions), RF: rf}
	}
	return out, nil
}

// CreateTopics creates topics; per-topic errors are returned in the map (nil = created).
func (a *Admin) CreateTopics(ctx context.Context, topics []NewTopic) (map[string]error, error) {
	return a.createTopics(ctx, topics, false)
}

// ValidateTopics implements cluster.Topics: CreateTopics with validate-only (nothing created).
func (a *Admin) ValidateTopics(ctx context.Context, topics []NewTopic) (map[string]error, error) {
	return a.createTopics(ctx, topics, true)
}

func (a *Admin) createTopics(ctx context.Context, topics []NewTopic, validateOnly bool) (map[string]error, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	want := make(map[string]int, len(topics))
	for _, t := range topics {
		want[t.Name] = t.Partitions
	}
	out := map[string]error{}
	for _, batch := range topicBatches(topics) { // within the controller's records per request
		specs := make([]kafka.TopicSpecification, 0, len(batch))
		for _, t := range batch {
			specs = append(specs, kafka.TopicSpecification{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: t.RF, Config: t.Configs})
		}
		res, err := a.a.CreateTopics(ctx, specs, kafka.SetAdminValidateOnly(validateOnly))
		if err != nil {
			return nil, a.wrap("create topics", err)
		}
		for _, r := range res {
			switch {
			case r.Error.Code() == kafka.ErrTopicAlreadyExists:
				out[r.Topic] = fmt.Errorf("%w: %w", cluster.ErrTopicExists, r.Error)
			case r.Error.Code() != kafka.ErrNoError:
				out[r.Topic] = r.Error
			default:
				out[r.Topic] = nil
			}
		}
		if validateOnly {
			continue
		}
		for _, t := range batch { // created with fewer partitions than asked: grown in steps
			if out[t.Name] == nil && t.Partitions < want[t.Name] {
				if err := a.growPartitions(ctx, t.Name, t.Partitions, want[t.Name]); err != nil {
					out[t.Name] = err
				}
			}
		}
	}
	return out, nil
}

// ErrTopicExists is the broker's TOPIC_ALREADY_EXISTS.
func ErrTopicExists(err error) bool {
	return errors.Is(err, cluster.ErrTopicExists) || IsCode(err, kafka.ErrTopicAlreadyExists)
}

// CreatePartitions grows a topic to total partitions, at most RecordsPerRequest partitions per
// request. It asks the topic's partition count first only when the growth could be too large
// for one request.
func (a *Admin) CreatePartitions(ctx context.Context, topic string, total int) error {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	have := 0
	if total > RecordsPerRequest {
		ts, err := a.ListTopics(ctx)
		if err != nil {
			return err
		}
		have = ts[topic].Partitions
	}
	return a.growPartitions(ctx, topic, have, total)
}

// growPartitions grows topic from have partitions to total in growSteps.
func (a *Admin) growPartitions(ctx context.Context, topic string, have, total int) error {
	for _, n := range growSteps(have, total) {
		res, err := a.a.CreatePartitions(ctx, []kafka.PartitionsSpecification{{Topic: topic, IncreaseTo: n}})
		if err != nil {
			return a.wrap("create partitions", err)
		}
		for _, r := range res {
			if r.Error.Code() != kafka.ErrNoError {
				return a.wrap("create partitions "+topic, r.Error)
			}
		}
	}
	return nil
}

// DeleteTopics deletes topics.
func (a *Admin) DeleteTopics(ctx context.Context, topics ...string) error {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.DeleteTopics(ctx, topics)
	if err != nil {
		return a.wrap("delete topics", err)
	}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError && r.Error.Code() != kafka.ErrUnknownTopicOrPart {
			return a.wrap("delete topic "+r.Topic, r.Error)
		}
	}
	return nil
}

func mapSource(s kafka.ConfigSource) ConfigSource {
	switch s {
	case kafka.ConfigSourceDynamicTopic:
		return SourceDynamicTopic
	case kafka.ConfigSourceDynamicBroker:
		return SourceDynamicBroker
	case kafka.ConfigSourceDynamicDefaultBroker:
		return SourceDynamicDefaultBroker
	case kafka.ConfigSourceStaticBroker:
		return SourceStaticBroker
	case kafka.ConfigSourceDefault:
		return SourceDefault
	}
	return SourceUnknown
}

// DescribeTopicConfigs returns every config entry of each topic.
func (a *Admin) DescribeTopicConfigs(ctx context.Context, topics ...string) (map[string]map[string]ConfigEntry, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	rs := make([]kafka.ConfigResource, 0, len(topics))
	for _, t := range topics {
		rs = append(rs, kafka.ConfigResource{Type: kafka.ResourceTopic, Name: t})
	}
	res, err := a.a.DescribeConfigs(ctx, rs)
	if err != nil {
		return nil, a.wrap("describe configs", err)
	}
	out := map[string]map[string]ConfigEntry{}
	for _, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			return nil, a.wrap("describe configs of "+r.Name, r.Error)
		}
		m := map[string]ConfigEntry{}
		for name, e := range r.Config {
			m[name] = ConfigEntry{Name: name, Value: e.Value, Source: mapSource(e.Source), ReadOnly: e.IsReadOnly, Sensitive: e.IsSensitive}
		}
		out[r.Name] = m
	}
	return out, nil
}

// IncrementalAlterTopicConfigs applies ops to topics (IncrementalAlterConfigs, KIP-339), at
// most RecordsPerRequest entries per request.
func (a *Admin) IncrementalAlterTopicConfigs(ctx context.Context, ops map[string][]ConfigOp) error {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	for _, batch := range configBatches(ops) {
		rs := make([]kafka.ConfigResource, 0, len(batch))
		for t, list := range batch {
			r := kafka.ConfigResource{Type: kafka.ResourceTopic, Name: t}
			for _, op := range list {
				e := kafka.ConfigEntry{Name: op.Name, Value: op.Value, IncrementalOperation: kafka.AlterConfigOpTypeSet}
				if op.Delete {
					e.IncrementalOperation = kafka.AlterConfigOpTypeDelete
					e.Value = ""
				}
				r.Config = append(r.Config, e)
			}
			rs = append(rs, r)
		}
		res, err := a.a.IncrementalAlterConfigs(ctx, rs)
		if err != nil {
			return a.wrap("incremental alter configs", err)
		}
		for _, r := range res {
			if r.Error.Code() != kafka.ErrNoError {
				return a.wrap("alter configs of "+r.Name, r.Error)
			}
		}
	}
	return nil
}
