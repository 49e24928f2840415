package e2e

// Interop with real Apache MirrorMaker 2 4.1.1 (dedicated mode, one JVM at a time): MM2 and kmm
// take over each other's flow on the same properties file with every record exactly once, kmm
// refuses to run a flow MM2 is running, `kmm config check` agrees with what MM2 accepts, and a
// chain A->B->C with MM2 on one hop and kmm on the other looks to MM2's own client classes like
// MM2 alone. Each test uses its own cluster aliases (see aliases), so MM2's groups, internal
// topics and heartbeats never meet another test's.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// tool is MM2 or kmm running a flow.
type tool struct {
	kind string // "MM2" or "kmm"
	m    *mm2Proc
	k    *proc
}

func startTool(t *testing.T, bed *testbed.Bed, kind, props string, clusters ...string) *tool {
	t.Helper()
	switch kind {
	case "MM2":
		var args []string
		if len(clusters) > 0 {
			args = append([]string{"--clusters"}, clusters...)
		}
		return &tool{kind: kind, m: startMM2(t, bed, props, args...)}
	case "kmm":
		args := []string{"replicate", props, "-o", "json"}
		if len(clusters) > 0 {
			args = append(args, "--clusters", strings.Join(clusters, ","))
		}
		return &tool{kind: kind, k: startKMM(t, args...)}
	}
	t.Fatalf("unknown tool %q", kind)
	return nil
}

// stop stops the tool gracefully and waits for its process to exit.
func (x *tool) stop(t *testing.T) {
	t.Helper()
	if x.m != nil {
		x.m.stop(t)
		return
	}
	if code := x.k.stop(t, syscall.SIGTERM, 60*time.Second); code != 0 {
		t.Fatalf("kmm exited %d after SIGTERM, want 0", code)
	}
}

func sum(xs []int64) int64 {
	var n int64
	for _, x := range xs {
		n += x
	}
	return n
}

// diag is one `kmm config check -o json` diagnostic.
type diag struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Line     int    `json:"line"`
	Key      string `json:"key"`
	Message  string `json:"message"`
}

// sideBySide runs `kmm config check` on the file MM2 runs and fails unless its warnings and
// errors are exactly want (key -> diagnostic code): the real mistakes the test put in on
// purpose, nothing about what MM2 accepts and uses.
func sideBySide(t *testing.T, props string, want map[string]string) {
	t.Helper()
	r := Run(t, "config", "check", props, "-o", "json")
	var rep struct {
		Diagnostics []diag `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("kmm config check -o json: exit %d, stdout is not JSON: %v\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	got := map[string]string{}
	var unexpected []string
	for _, d := range rep.Diagnostics {
		if d.Severity != "warning" && d.Severity != "error" {
			continue
		}
		got[d.Key] = d.Code
		if want[d.Key] != d.Code {
			unexpected = append(unexpected, fmt.Sprintf("line %d: %s %s [%s]: %s", d.Line, d.Severity, d.Key, d.Code, d.Message))
		}
	}
	for k, c := range want {
		if got[k] != c {
			unexpected = append(unexpected, fmt.Sprintf("missing warning [%s] for %s", c, k))
		}
	}
	if len(unexpected) > 0 || r.Code != 0 {
		t.Fatalf("kmm config check on the file MM2 runs (exit %d):\n  %s", r.Code, strings.Join(unexpected, "\n  "))
	}
}

// MM2 replicates part of a stream A->B and is stopped gracefully; kmm, on the same file, resumes
// from the positions MM2 stored in mm2-offsets.A.internal: every record exactly once.
func TestInteropTakeoverFromMM2(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "takeover")
	const parts = 3
	bed.A.CreateTopic(t, topic, parts, nil)
	flow := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, flow+".enabled = true", flow+".topics = "+regexp.QuoteMeta(topic))
	sideBySide(t, props, nil)
	remote := al.A + "." + topic

	bed.A.Produce(t, seqRecords(topic, parts, 0, 5000))
	start := time.Now()
	m := startMM2(t, bed, props)
	waitCount(t, bed.B, remote, parts, 5000, 2*time.Minute)
	t.Logf("MM2 copied the first 5000 records %s after its start", time.Since(start).Round(time.Millisecond))
	// More records while MM2 runs; it is stopped right after they are written, while it copies
	// them (MM2 goes on copying during its shutdown and stores what the target acknowledged).
	bed.A.Produce(t, seqRecords(topic, parts, 5000, 5000))
	took := m.stop(t)
	if n, state := connectGroupMembers(t, bed, bed.B, al.A+"-mm2"); n != 0 {
		t.Fatalf("MM2 stopped but its group %s has %d members (%s)", al.A+"-mm2", n, state)
	}
	ends := checkPositions(t, "MM2", bed.B, al.A, topic, remote, parts)
	t.Logf("MM2 stopped in %s having copied %d of 10000 records; its positions match the target", took.Round(time.Millisecond), sum(ends))

	bed.A.Produce(t, seqRecords(topic, parts, 10000, 2000))
	k := startTool(t, bed, "kmm", props)
	waitCount(t, bed.B, remote, parts, 12000, 2*time.Minute)
	k.stop(t)
	checkPositions(t, "kmm", bed.B, al.A, topic, remote, parts)
	assertExactlyOnce(t, bed, bed.A, bed.B, topic, remote, parts, 12000)
}

// kmm replicates part of a stream, stops on SIGTERM (exit 0); MM2, on the same file, resumes
// from kmm's positions: every record exactly once.
func TestInteropHandBackToMM2(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "handback")
	const parts = 3
	bed.A.CreateTopic(t, topic, parts, nil)
	flow := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, flow+".enabled = true", flow+".topics = "+regexp.QuoteMeta(topic))
	sideBySide(t, props, nil)
	remote := al.A + "." + topic

	bed.A.Produce(t, seqRecords(topic, parts, 0, 5000))
	k := startTool(t, bed, "kmm", props)
	waitCount(t, bed.B, remote, parts, 5000, 2*time.Minute)
	bed.A.Produce(t, seqRecords(topic, parts, 5000, 5000))
	k.stop(t)
	ends := checkPositions(t, "kmm", bed.B, al.A, topic, remote, parts)
	t.Logf("kmm stopped having copied %d of 10000 records; its positions match the target", sum(ends))

	bed.A.Produce(t, seqRecords(topic, parts, 10000, 2000))
	start := time.Now()
	m := startMM2(t, bed, props)
	waitCount(t, bed.B, remote, parts, 12000, 2*time.Minute)
	t.Logf("MM2 caught up %s after its start", time.Since(start).Round(time.Millisecond))
	m.stop(t)
	checkPositions(t, "MM2", bed.B, al.A, topic, remote, parts)
	assertExactlyOnce(t, bed, bed.A, bed.B, topic, remote, parts, 12000)
}

// stream produces total sequenced records to topic continuously (about 1000 per second), never
// more than lagCap ahead of what the target holds, so a switch point measured on the target is
// always mid-stream: records are being produced and some are not yet copied.
type stream struct {
	produced atomic.Int64
	done     chan struct{}
	err      error
}

func startStream(t *testing.T, src, tgt testbed.Cluster, topic, remote string, parts, total, lagCap int) *stream {
	t.Helper()
	p, err := rdkafka.NewProducer("stream "+src.Name, rdkafka.Config{"bootstrap.servers": src.Bootstrap, "linger.ms": "5", "enable.idempotence": "true"})
	if err != nil {
		t.Fatal(err)
	}
	a := tgt.Admin(t)
	var tps []rdkafka.TP
	for i := 0; i < parts; i++ {
		tps = append(tps, rdkafka.TP{Topic: remote, Partition: int32(i)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &stream{done: make(chan struct{})}
	t.Cleanup(func() { cancel(); <-s.done })
	copied := func() int {
		res, err := a.ListOffsets(ctx, tps, rdkafka.Latest)
		if err != nil {
			return 0
		}
		n := 0
		for _, r := range res {
			n += int(r.Offset)
		}
		return n
	}
	go func() {
		defer close(s.done)
		defer p.Close()
		const batch = 100
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for from := 0; from < total; from += batch {
			for from-copied() > lagCap {
				select {
				case <-ctx.Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
			if _, err := p.ProduceSync(ctx, seqRecords(topic, parts, from, min(batch, total-from))); err != nil {
				if ctx.Err() == nil {
					s.err = err
				}
				return
			}
			s.produced.Store(int64(min(from+batch, total)))
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *stream) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(timeout):
		t.Fatalf("the producer did not finish within %s (%d produced)", timeout, s.produced.Load())
	}
	if s.err != nil {
		t.Fatalf("producing the stream: %v", s.err)
	}
}

// While a stream is produced continuously, the flow moves between MM2 and kmm when the target
// holds 10%, 45% and 80% of it: MM2->kmm->MM2->kmm and kmm->MM2->kmm->MM2, so each direction is
// exercised at each point. Every stopping tool must have stored exactly what it wrote, and the
// target ends with every record exactly once (audit and per-partition digests).
func TestInteropSwitchMidStream(t *testing.T) {
	for _, first := range []string{"MM2", "kmm"} {
		t.Run(first+"-first", func(t *testing.T) { switchMidStream(t, first) })
	}
}

func switchMidStream(t *testing.T, first string) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "switch")
	const parts, total, lagCap = 3, 30000, 4000
	bed.A.CreateTopic(t, topic, parts, nil)
	flow := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, flow+".enabled = true", flow+".topics = "+regexp.QuoteMeta(topic))
	sideBySide(t, props, nil)
	remote := al.A + "." + topic
	next := map[string]string{"MM2": "kmm", "kmm": "MM2"}

	start := time.Now()
	s := startStream(t, bed.A, bed.B, topic, remote, parts, total, lagCap)
	cur := startTool(t, bed, first, props)
	copied := int64(0)
	for _, pct := range []int{10, 45, 80} {
		// The tool that just started copies on from where the previous one stopped...
		waitCount(t, bed.B, remote, parts, int(copied)+1, 2*time.Minute)
		t.Logf("%5.1fs %s copying", time.Since(start).Seconds(), cur.kind)
		// ...and is stopped once the target holds pct% of the stream, while it is produced.
		waitCount(t, bed.B, remote, parts, total*pct/100, 3*time.Minute)
		produced := s.produced.Load()
		cur.stop(t)
		ends := checkPositions(t, cur.kind, bed.B, al.A, topic, remote, parts)
		if produced >= total {
			t.Fatalf("switch at %d%%: the stream was already fully produced; not mid-stream", pct)
		}
		copied = sum(ends)
		t.Logf("%5.1fs switch %s->%s at %d%%: %d records copied, %d produced when the stop began", time.Since(start).Seconds(), cur.kind, next[cur.kind], pct, copied, produced)
		cur = startTool(t, bed, next[cur.kind], props)
	}
	s.wait(t, 3*time.Minute)
	waitCount(t, bed.B, remote, parts, total, 3*time.Minute)
	cur.stop(t)
	checkPositions(t, cur.kind, bed.B, al.A, topic, remote, parts)
	assertExactlyOnce(t, bed, bed.A, bed.B, topic, remote, parts, total)
	t.Logf("%5.1fs done", time.Since(start).Seconds())
}

// flowStarted reports whether kmm's NDJSON stdout has a flow_started event for flow.
func flowStarted(p *proc, flow string) bool {
	for _, l := range strings.Split(p.stdout.String(), "\n") {
		var ev struct{ Type, Flow string }
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Type == "flow_started" && ev.Flow == flow {
			return true
		}
	}
	return false
}

// waitStartedOrExited waits until kmm started flow or exited; it reports whether it exited.
func waitStartedOrExited(t *testing.T, p *proc, flow string, timeout time.Duration) bool {
	t.Helper()
	exited := false
	testbed.Eventually(t, timeout, func() error {
		select {
		case err := <-p.done:
			p.done <- err
			exited = true
			return nil
		default:
		}
		if flowStarted(p, flow) {
			return nil
		}
		return fmt.Errorf("kmm neither started flow %s nor exited", flow)
	})
	return exited
}

// kmm refuses to start a flow while MM2 runs it (exit 3 naming MM2's Connect group); --force
// overrides; once MM2 has stopped, kmm starts without --force. kmm failover and kmm failback
// refuse too. MM2 copies kmm's provenance header (kmm.origin) through as an ordinary header.
func TestInteropRefusesWhileMM2Runs(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "refuse")
	bed.A.CreateTopic(t, topic, 1, nil)
	flow := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, flow+".enabled = true", flow+".topics = "+regexp.QuoteMeta(topic))
	remote := al.A + "." + topic
	group := al.A + "-mm2"

	bed.A.Produce(t, seqRecords(topic, 1, 0, 100))
	// 10 records as kmm writes its copies under IdentityReplicationPolicy (the provenance header
	// last): MM2 copies the header unchanged.
	marked := seqRecords(topic, 1, 100, 10)
	for i := range marked {
		marked[i].Headers = append(marked[i].Headers, rdkafka.Header{Key: rdkafka.HeaderOrigin, Value: []byte(al.C)})
	}
	bed.A.Produce(t, marked)
	m := startMM2(t, bed, props)
	waitCount(t, bed.B, remote, 1, 110, 2*time.Minute)
	withOrigin := 0
	for _, r := range bed.B.ConsumeN(t, remote, 1, 110, time.Minute) {
		if n := len(r.Headers); n > 0 && r.Headers[n-1].Key == rdkafka.HeaderOrigin {
			if string(r.Headers[n-1].Value) != al.C || r.Offset < 100 {
				t.Errorf("MM2's copy at %d: %s = %q", r.Offset, rdkafka.HeaderOrigin, r.Headers[n-1].Value)
			}
			withOrigin++
		}
	}
	if withOrigin != 10 {
		t.Errorf("MM2 copied %d records with the %s header, want 10", withOrigin, rdkafka.HeaderOrigin)
	}
	n, state := connectGroupMembers(t, bed, bed.B, group)
	if n < 1 {
		t.Fatalf("MM2 replicates, yet its Connect group %s on %s has %d members (%s)", group, al.B, n, state)
	}
	t.Logf("MM2 runs %s: group %s on %s has %d member(s), state %s", flow, group, al.B, n, state)

	p := startKMM(t, "replicate", props, "-o", "json")
	if !waitStartedOrExited(t, p, flow, time.Minute) {
		_ = p.stop(t, syscall.SIGTERM, time.Minute)
		t.Fatalf("kmm started flow %s while MM2 runs it (group %s has %d member(s)); want exit 3 naming the group\n%s", flow, group, n, tail(p.stderr.String(), 10))
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(p.stderr.String(), group) {
		t.Fatalf("kmm while MM2 runs: exit %d, want 3 naming %s\n%s", code, group, tail(p.stderr.String(), 10))
	}
	t.Logf("kmm refused (exit 3):\n%s", tail(p.stderr.String(), 3))

	// kmm failover refuses too (exit 3, nothing written): MM2 would go on writing into the new
	// primary. (librdkafka cannot describe a Connect group; the factory's group prober can.)
	r := Run(t, "failover", props, "--flow", flow, "--mode", "planned", "--quiet-for", "0s", "--timeout", "30s", "--yes")
	if r.Code != 3 || !strings.Contains(r.Stderr, "Apache MirrorMaker 2 is running flow "+flow+" (Connect group "+group+" on "+al.B) || !strings.Contains(r.Stderr, "nothing was changed") {
		t.Errorf("failover while MM2 runs: exit %d, want 3 naming %s\n%s", r.Code, group, r.Stderr)
	}
	st := readState(t, bed.B)
	for _, k := range []string{flowstate.FlowKey(al.A, al.B), plan.RunKey("failover", flow)} {
		if v := st[k]; v != nil {
			t.Errorf("failover while MM2 runs wrote %s: %s", k, v)
		}
	}
	// kmm failback of the flow (marked FAILED_OVER here) refuses while MM2 runs it: exit 3
	// naming the group, no run journaled, the flow left FAILED_OVER; then the mark is undone.
	markFlow(t, bed.B, &flowstate.FlowRecord{Flow: flow, State: flowstate.FailedOver, Epoch: 2, At: time.Now()})
	r = Run(t, "failback", props, "--flow", flow, "--quiet-for", "0s", "--timeout", "30s", "--yes")
	if r.Code != 3 || !strings.Contains(r.Stderr, "Apache MirrorMaker 2 is running flow "+flow+" (Connect group "+group+" on "+al.B) || !strings.Contains(r.Stderr, "nothing was changed") {
		t.Errorf("failback while MM2 runs: exit %d, want 3 naming %s\n%s", r.Code, group, r.Stderr)
	}
	st = readState(t, bed.B)
	if v := st[plan.RunKey("failback", flow)]; v != nil {
		t.Errorf("failback while MM2 runs journaled a run: %s", v)
	}
	if f, _ := flowstate.DecodeFlow(st[flowstate.FlowKey(al.A, al.B)]); f == nil || f.State != flowstate.FailedOver || f.Epoch != 2 {
		t.Errorf("failback while MM2 runs changed the flow state: %+v", f)
	}
	markFlow(t, bed.B, &flowstate.FlowRecord{Flow: flow, State: flowstate.Replicating, Epoch: 3, At: time.Now()})

	p = startKMM(t, "replicate", props, "--force", "-o", "json")
	if waitStartedOrExited(t, p, flow, time.Minute) {
		t.Fatalf("kmm --force exited %d instead of starting %s\n%s", p.cmd.ProcessState.ExitCode(), flow, tail(p.stderr.String(), 10))
	}
	if code := p.stop(t, syscall.SIGTERM, time.Minute); code != 0 {
		t.Fatalf("kmm --force: exit %d after SIGTERM", code)
	}

	m.stop(t)
	if n, state := connectGroupMembers(t, bed, bed.B, group); n != 0 {
		t.Fatalf("MM2 stopped but %s has %d members (%s)", group, n, state)
	}
	p = startKMM(t, "replicate", props, "-o", "json")
	if waitStartedOrExited(t, p, flow, time.Minute) {
		t.Fatalf("kmm exited %d after MM2 stopped; want it to start\n%s", p.cmd.ProcessState.ExitCode(), tail(p.stderr.String(), 10))
	}
	if code := p.stop(t, syscall.SIGTERM, time.Minute); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
}

// `kmm config check` on the exact file MM2 runs warns about the real mistakes put in on purpose
// (MM2 accepts them without a word) and about nothing else, in particular not about a key MM2
// does use.
func TestInteropConfigCheckSideBySide(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "check")
	bed.A.CreateTopic(t, topic, 1, nil)
	flow := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, flow+".enabled = true", flow+".topics = "+regexp.QuoteMeta(topic),
		// Real mistakes that MM2 accepts silently:
		al.A+".topics = "+regexp.QuoteMeta(topic), // becomes source.cluster.topics, which no connector reads
		"offset.flush.interval.ms = 500",          // a Connect worker key at top level: MM2 drops it
		// Not a mistake: MirrorMakerConfig's own plugin loader reads it at top level.
		"plugin.discovery = service_load",
	)
	bed.A.Produce(t, seqRecords(topic, 1, 0, 10))
	m := startMM2(t, bed, props)
	waitCount(t, bed.B, al.A+"."+topic, 1, 10, 2*time.Minute)
	m.stop(t)
	// Every Plugins instance of that run (MirrorMakerConfig's from the top-level keys, each
	// herder's from <T>.plugin.discovery) used service_load: none scanned reflectively.
	if scans := m.grep("Scanning plugins with"); len(scans) == 0 || len(m.grep("ReflectionScanner")) > 0 {
		t.Fatalf("premise: MM2 did not honour plugin.discovery everywhere:\n%s", strings.Join(scans, "\n"))
	}
	sideBySide(t, props, map[string]string{
		al.A + ".topics":           "connector-key-on-cluster",
		"offset.flush.interval.ms": "worker-key-top-level",
	})
}

// topoObservation is what MM2's client classes and the topic lists show of a chain A->B->C,
// with the per-test aliases replaced by A, B, C and the topic by T.
type topoObservation struct {
	Topics     map[string][]string // cluster -> replicated topics (data and heartbeats)
	Heartbeats map[string][]string // cluster/topic -> heartbeat source->target pairs
	Upstream   map[string][]string // cluster -> RemoteClusterUtils.upstreamClusters
	Hops       map[string]string   // cluster -> replicationHops to A, B, C
}

// ours reports whether name is a replicated topic whose whole alias chain is this test's:
// X.base or X.Y.base with X, Y in al and base heartbeats or topic.
func ours(al aliases, name, topic string) bool {
	var prefix string
	switch {
	case strings.HasSuffix(name, "."+topic):
		prefix = strings.TrimSuffix(name, "."+topic)
	case strings.HasSuffix(name, ".heartbeats"):
		prefix = strings.TrimSuffix(name, ".heartbeats")
	default:
		return false
	}
	for _, p := range strings.Split(prefix, ".") {
		if !al.has(p) {
			return false
		}
	}
	return true
}

// In a chain A->B->C, MM2 on one hop and kmm on the other produce the same remote topic names
// (B.A.T on C), heartbeats (heartbeats, A.heartbeats, B.heartbeats, B.A.heartbeats with the same
// source->target pairs) and replication hops / upstream clusters (RemoteClusterUtils) as MM2
// alone; the data arrives on C exactly once.
func TestInteropTopology(t *testing.T) {
	var ref *topoObservation
	for _, sc := range []struct{ name, ab, bc string }{
		{"MM2-alone", "MM2", "MM2"},
		{"MM2-AB_kmm-BC", "MM2", "kmm"},
		{"kmm-AB_MM2-BC", "kmm", "MM2"},
	} {
		t.Run(sc.name, func(t *testing.T) {
			obs := runTopology(t, sc.ab, sc.bc)
			if ref == nil {
				ref = obs
				return
			}
			if !reflect.DeepEqual(obs, ref) {
				t.Fatalf("differs from MM2 alone:\n got %+v\nwant %+v", *obs, *ref)
			}
		})
	}
}

func runTopology(t *testing.T, ab, bc string) *topoObservation {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "topo")
	const parts, n = 2, 2000
	bed.A.CreateTopic(t, topic, parts, nil)
	props := interopProps(t, bed, al, 3,
		al.A+"->"+al.B+".enabled = true", al.A+"->"+al.B+".topics = "+regexp.QuoteMeta(topic),
		al.B+"->"+al.C+".enabled = true", al.B+"->"+al.C+".topics = "+al.A+`\\.`+regexp.QuoteMeta(topic))
	sideBySide(t, props, nil)
	clusters := map[string]testbed.Cluster{"A": bed.A, "B": bed.B, "C": bed.C}
	from := map[string]int64{}
	for name, c := range clusters {
		ts, err := c.Admin(t).ListTopics(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ts["heartbeats"]; ok { // a fresh cluster has none yet
			from[name] = endOffsets(t, c, "heartbeats", 1)[0]
		}
	}
	bed.A.Produce(t, seqRecords(topic, parts, 0, n))

	start := time.Now()
	var tools []*tool
	switch {
	case ab == "MM2" && bc == "MM2":
		tools = append(tools, startTool(t, bed, "MM2", props))
	default:
		// The tool on A->B runs the herders that target B; the other one runs the rest.
		tools = append(tools, startTool(t, bed, ab, props, al.B), startTool(t, bed, bc, props, al.A, al.C))
	}
	remoteB, remoteC := al.A+"."+topic, al.B+"."+al.A+"."+topic
	waitCount(t, bed.B, remoteB, parts, n, 2*time.Minute)
	waitCount(t, bed.C, remoteC, parts, n, 2*time.Minute)
	t.Logf("%s on A->B, %s on B->C: %d records on C after %s", ab, bc, n, time.Since(start).Round(time.Millisecond))

	// Heartbeats MM2 alone produces: each herder S->T emits S->T into T's heartbeats, and the
	// enabled flows copy heartbeats topics downstream.
	type hbTopic struct{ cluster, topic, name string }
	hbTopics := []hbTopic{
		{"A", "heartbeats", "A/heartbeats"},
		{"B", "heartbeats", "B/heartbeats"},
		{"B", al.A + ".heartbeats", "B/A.heartbeats"},
		{"C", "heartbeats", "C/heartbeats"},
		{"C", al.B + ".heartbeats", "C/B.heartbeats"},
		{"C", al.B + "." + al.A + ".heartbeats", "C/B.A.heartbeats"},
	}
	want := map[string][]string{
		"A/heartbeats":     {"B->A", "C->A"},
		"B/heartbeats":     {"A->B", "C->B"},
		"B/A.heartbeats":   {"B->A", "C->A"},
		"C/heartbeats":     {"A->C", "B->C"},
		"C/B.heartbeats":   {"A->B", "C->B"},
		"C/B.A.heartbeats": {"B->A", "C->A"},
	}
	mine := func(pairs map[string]bool) []string {
		var out []string
		for _, p := range sortedKeys(pairs) {
			if s, d, _ := strings.Cut(p, "->"); al.has(s) && al.has(d) {
				out = append(out, al.normalize(p))
			}
		}
		return out
	}
	admins := map[string]*rdkafka.Admin{"A": bed.A.Admin(t), "B": bed.B.Admin(t), "C": bed.C.Admin(t)}
	testbed.Eventually(t, 2*time.Minute, func() error {
		for _, h := range hbTopics {
			off := int64(0)
			if h.topic == "heartbeats" {
				off = from[h.cluster]
			}
			pairs, err := heartbeatPairs(admins[h.cluster], clusters[h.cluster], h.topic, off)
			if err != nil {
				return fmt.Errorf("%s: %v", h.name, err)
			}
			if got := mine(pairs); !reflect.DeepEqual(got, want[h.name]) {
				return fmt.Errorf("%s: heartbeats %v, want %v", h.name, got, want[h.name])
			}
		}
		return nil
	})
	t.Logf("all heartbeats present after %s", time.Since(start).Round(time.Millisecond))

	obs := &topoObservation{Topics: map[string][]string{}, Heartbeats: map[string][]string{}, Upstream: map[string][]string{}, Hops: map[string]string{}}
	for _, name := range []string{"A", "B", "C"} {
		c := clusters[name]
		ts, err := c.Admin(t).ListTopics(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var list []string
		for tn := range ts {
			if ours(al, tn, topic) {
				list = append(list, strings.ReplaceAll(al.normalize(tn), topic, "T"))
			}
		}
		obs.Topics[name] = sortStrings(list)
		args := []string{"topology", c.Bootstrap, strings.Join(al.all(), ",")}
		for _, h := range hbTopics {
			if h.cluster == name {
				off := int64(0)
				if h.topic == "heartbeats" {
					off = from[name]
				}
				args = append(args, fmt.Sprintf("%s@%d", h.topic, off))
			}
		}
		var hops []string
		for _, l := range runProbe(t, bed, args...) {
			key, val, _ := strings.Cut(l, "=")
			switch {
			case key == "upstreamClusters":
				var up []string
				for _, a := range strings.Split(val, ",") {
					if al.has(a) {
						up = append(up, al.normalize(a))
					}
				}
				obs.Upstream[name] = up
			case strings.HasPrefix(key, "replicationHops "):
				hops = append(hops, al.normalize(strings.TrimPrefix(key, "replicationHops "))+"="+val)
			case strings.HasPrefix(key, "heartbeats "):
				pairs := map[string]bool{}
				for _, p := range strings.Split(val, ",") {
					if p != "" {
						pairs[p] = true
					}
				}
				obs.Heartbeats[name+"/"+al.normalize(strings.TrimPrefix(key, "heartbeats "))] = mine(pairs)
			}
		}
		obs.Hops[name] = strings.Join(hops, " ")
	}
	for _, x := range tools {
		x.stop(t)
	}
	assertExactlyOnce(t, bed, bed.A, bed.B, topic, remoteB, parts, n)
	assertExactlyOnce(t, bed, bed.A, bed.C, topic, remoteC, parts, n)

	// What MM2 alone must show (checked for every setup, not only compared with MM2 alone).
	wantObs := &topoObservation{
		Topics:     map[string][]string{"A": nil, "B": {"A.T", "A.heartbeats"}, "C": {"B.A.T", "B.A.heartbeats", "B.heartbeats"}},
		Heartbeats: want,
		Upstream:   map[string][]string{"A": nil, "B": {"A"}, "C": {"A", "B"}},
		Hops:       map[string]string{"A": "A=-1 B=-1 C=-1", "B": "A=1 B=-1 C=-1", "C": "A=2 B=1 C=-1"},
	}
	t.Logf("observed: topics %v; heartbeats %v; upstream clusters %v; replication hops %v", obs.Topics, obs.Heartbeats, obs.Upstream, obs.Hops)
	if !reflect.DeepEqual(obs, wantObs) {
		t.Fatalf("%s on A->B, %s on B->C:\n got %+v\nwant %+v", ab, bc, *obs, *wantObs)
	}
	return obs
}

func sortStrings(s []string) []string {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	if len(m) == 0 {
		return nil
	}
	return sortedKeys(m)
}
