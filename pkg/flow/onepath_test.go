package flow_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// oneValidationPathEnv serves the ${env:...} references of the files below.
var oneValidationPathEnv = map[string]string{
	"NEON_BOOTSTRAP_SERVER": "neon-broker:9092", "NEON_USERNAME": "neon-user", "NEON_PASSWORD": "neon-password",
	"MIRROR_MM2_PASSWORD": "mirror-password", "MM2_A_BOOTSTRAP": "a-1:9092,a-2:9092", "MM2_B_USER": "mm2", "MM2_B_PASSWORD": "hunter2", "MM2_TASKS": "6",
}

// TestCheckRefusesWhatReplicateRefuses: whatever `kmm config check` accepts, `kmm replicate`
// gets past start-up with: for every file of the corpus (and the real MM2 files, when present)
// that mm2conf loads without errors, the engine flows build and validate, and librdkafka accepts
// every client configuration replicate creates (bootstrap.servers left out, so nothing
// connects). A client librdkafka refuses here would make replicate exit at start-up after check
// passed; the fix belongs in mm2conf's checks, with the file's line.
func TestCheckRefusesWhatReplicateRefuses(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/mm2/*.properties")
	real := os.Getenv("KMM_MM2_REAL_DIR")
	if real == "" {
		real = "../../../shared/mm2-real"
	}
	more, _ := filepath.Glob(filepath.Join(real, "*.properties"))
	files = append(files, more...)
	sort.Strings(files)
	if len(files) < 40 {
		t.Fatalf("only %d files", len(files))
	}
	// Every client replicate creates, by kind and configuration. Whether librdkafka accepts a
	// configuration depends on the kind and the settings only (the name labels errors), so each
	// distinct one is created once, and a refusal is reported for every file, flow and role
	// that uses it. Creating and closing a client mostly waits (the Go client's poller ends
	// within 100 ms), so the distinct ones are checked a few at a time.
	type use struct{ file, flow, role string }
	type client struct {
		kind string
		cfg  rdkafka.Config
		uses []use
	}
	byKey := map[string]*client{}
	var keys []string
	accepted, clients := 0, 0
	for _, file := range files {
		cfg, err := mm2conf.Load(mm2conf.LoadOptions{ConfigFile: file, LookupEnv: func(k string) (string, bool) { v, ok := oneValidationPathEnv[k]; return v, ok }})
		if err != nil {
			continue // check refuses it, and so does replicate
		}
		accepted++
		flows, err := flow.FromMM2(cfg)
		if err != nil {
			t.Errorf("%s: config check accepts it, replicate refuses it: %v", file, err)
			continue
		}
		for _, f := range flows {
			if err := f.Validate(); err != nil {
				t.Errorf("%s: config check accepts it, replicate refuses it: %v", file, err)
				continue
			}
			cons, prod := rdkafka.Config(f.ReplicationConsumer()), rdkafka.Config(f.ReplicationProducer())
			type role struct {
				role, kind string
				cfg        rdkafka.Config
			}
			cs := []role{{"target producer", "p", f.TargetProducer}, {"target admin", "a", f.TargetAdmin}}
			if f.Enabled {
				cs = append(cs, role{"replication consumer", "c", cons}, role{"replication producer", "p", prod},
					role{"source admin", "a", f.SourceAdmin}, role{"source producer", "p", f.SourceProducer},
					role{"source consumer", "c", f.SourceConsumer}, role{"target consumer", "c", f.TargetConsumer})
			}
			for _, c := range cs {
				m := rdkafka.Config{}
				var kv []string
				for k, v := range c.cfg {
					if k != "bootstrap.servers" {
						m[k] = v
						kv = append(kv, k+"\x00"+v)
					}
				}
				sort.Strings(kv)
				key := c.kind + "\x01" + strings.Join(kv, "\x01")
				cl := byKey[key]
				if cl == nil {
					cl = &client{kind: c.kind, cfg: m}
					byKey[key] = cl
					keys = append(keys, key)
				}
				cl.uses = append(cl.uses, use{strings.TrimPrefix(file, "../../"), f.Name(), c.role})
				clients++
			}
		}
	}
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, key := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c := byKey[key]
			var err error
			switch c.kind {
			case "p":
				var p *rdkafka.Producer
				if p, err = rdkafka.NewProducer("producer", c.cfg); err == nil {
					p.Close()
				}
			case "c":
				var k *rdkafka.Consumer
				if k, err = rdkafka.NewConsumer("consumer", c.cfg); err == nil {
					k.Close()
				}
			default:
				var a *rdkafka.Admin
				if a, err = rdkafka.NewAdmin("admin", c.cfg); err == nil {
					a.Close()
				}
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, key := range keys {
		if errs[i] == nil {
			continue
		}
		for _, u := range byKey[key].uses {
			t.Errorf("%s: flow %s: config check accepts it, but librdkafka refuses the %s that replicate creates: %v",
				u.file, u.flow, u.role, errs[i])
		}
	}
	t.Logf("%d distinct client configurations created", len(keys))
	t.Logf("%d of %d files accepted by config check; librdkafka accepted their %d client configurations", accepted, len(files), clients)
	if accepted < 30 {
		t.Errorf("only %d files accepted; the test proves little", accepted)
	}
}

// TestExplainAgreesWithTheEngine: what `kmm config explain --topic/--group` says a flow does
// with a name is what the engine behind replicate, lag and status does (flow.Flow's
// Selected and GroupFilter), for every flow of every file check accepts.
func TestExplainAgreesWithTheEngine(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/mm2/*.properties")
	real := os.Getenv("KMM_MM2_REAL_DIR")
	if real == "" {
		real = "../../../shared/mm2-real"
	}
	more, _ := filepath.Glob(filepath.Join(real, "*.properties"))
	files = append(files, more...)
	checked := 0
	for _, file := range files {
		cfg, err := mm2conf.Load(mm2conf.LoadOptions{ConfigFile: file, LookupEnv: func(k string) (string, bool) { v, ok := oneValidationPathEnv[k]; return v, ok }})
		if err != nil {
			continue
		}
		names := []string{"orders", "heartbeats", "__consumer_offsets", "x.internal", "x-internal", "mm2-offset-syncs.B.internal", "payments.replica"}
		groups := []string{"app", "console-consumer-1", "connect-x", "__g", "orders-service"}
		for _, a := range cfg.Clusters {
			names = append(names, a+".orders", a+".heartbeats", a+"_orders", a+"orders", a+".checkpoints.internal")
			groups = append(groups, a+"-mm2")
		}
		rfs, err := flow.FromMM2(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i, mf := range cfg.Flows {
			rf := rfs[i]
			for _, n := range names {
				v := mf.Topic(n)
				if engine := rf.Enabled && rf.Selected(n); engine != v.Replicated {
					t.Errorf("%s %s topic %q: explain says replicated=%v (%s), the engine %v", file, mf.Name(), n, v.Replicated, v.Reason, engine)
				}
				if v.Replicated && v.TargetTopic != rf.RemoteTopic(n) {
					t.Errorf("%s %s topic %q: explain names it %q on the target, the engine %q", file, mf.Name(), n, v.TargetTopic, rf.RemoteTopic(n))
				}
				checked++
			}
			for _, g := range groups {
				v := mf.Group(g)
				if engine := rf.Enabled && rf.EmitCheckpoints && rf.GroupFilter(g); engine != v.Checkpointed {
					t.Errorf("%s %s group %q: explain says checkpointed=%v (%s), the engine %v", file, mf.Name(), g, v.Checkpointed, v.Reason, engine)
				}
				if v.Synced != (v.Checkpointed && rf.SyncGroupOffsets) {
					t.Errorf("%s %s group %q: explain says synced=%v, the engine %v", file, mf.Name(), g, v.Synced, rf.SyncGroupOffsets)
				}
				checked++
			}
		}
	}
	t.Logf("%d verdicts compared", checked)
	if checked < 1000 {
		t.Errorf("only %d verdicts compared", checked)
	}
}
