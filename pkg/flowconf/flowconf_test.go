package flowconf

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kmmproject/kmm/mm2conf"
)

func load(t *testing.T, lines string) *mm2conf.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(p, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := mm2conf.Load(mm2conf.LoadOptions{ConfigFile: p})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestReplicatorFlowFiltersAndDefaults(t *testing.T) {
	cfg := load(t, "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\nA->B.topics = orders.*\nA->B.groups = app-.*\n")
	flows, err := Replicator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var f = flows[0]
	if f.Name() != "A->B" || !f.Enabled {
		t.Fatalf("flow %s enabled=%v", f.Name(), f.Enabled)
	}
	// MM2's default config.properties.exclude: these are never synced, others are.
	for name, excluded := range map[string]bool{"min.insync.replicas": true, "message.timestamp.type": true, "retention.ms": false, "cleanup.policy": false} {
		if got := f.ConfigExcluded(name); got != excluded {
			t.Errorf("ConfigExcluded(%s) = %v, want %v", name, got, excluded)
		}
	}
	if !f.TopicFilter("orders-1") || f.TopicFilter("payments") {
		t.Error("topic filter")
	}
	if !f.GroupFilter("app-1") || f.GroupFilter("console-consumer-1") {
		t.Error("group filter")
	}
	if f.RefreshTopicsInterval != DefaultRefreshTopicsInterval || f.OffsetFlushInterval != DefaultOffsetFlushInterval || f.OffsetsTopic != "mm2-offsets.A.internal" || f.MM2Group != "A-mm2" {
		t.Errorf("defaults: %+v", f)
	}
}
