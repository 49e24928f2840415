package replsource

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/httpapi"
	"github.com/kmmproject/kmm/pkg/replicator"
)

type memFS struct{ m fstest.MapFS }

func (f memFS) ReadFile(name string) ([]byte, error) {
	return fs.ReadFile(f.m, strings.TrimPrefix(name, "/"))
}
func (f memFS) Stat(name string) (fs.FileInfo, error) {
	return fs.Stat(f.m, strings.TrimPrefix(name, "/"))
}

const props = `clusters = A, B
A.bootstrap.servers = a1:9092
B.bootstrap.servers = b1:9092
A->B.enabled = true
A->B.topics = orders.*
tasks.max = 3
A.security.protocol = SASL_SSL
A.sasl.mechanism = PLAIN
A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="s3cret";
B.ssl.truststore.password = ${file:/etc/kmm/secrets.properties:truststore}
config.providers = file
config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider
`

// The wiring the command uses: MM2's connector config through Configs, served with secrets
// hidden, and the flows listed (not running) before Run.
func TestConfigsServed(t *testing.T) {
	cfg, err := mm2conf.Load(mm2conf.LoadOptions{ConfigFile: "mm2.properties",
		FS: memFS{fstest.MapFS{
			"mm2.properties":             {Data: []byte(props)},
			"etc/kmm/secrets.properties": {Data: []byte("truststore=changeit\n")},
		}},
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	flows := []*flow.Flow{{Source: "A", Target: "B", Enabled: true, Tasks: 3, EmitHeartbeats: true},
		{Source: "B", Target: "A", EmitHeartbeats: true}}
	src := New(replicator.New(flows, replicator.Options{}), flows)
	st := src.Stats()
	if len(st) != 2 || st[0].Name() != "A->B" || st[0].Running || st[0].Tasks != 3 || st[1].Enabled || !st[1].EmitHeartbeats {
		t.Fatalf("stats before Run: %+v", st)
	}
	srv, err := httpapi.New("127.0.0.1:0", src, httpapi.Options{Configs: Configs(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	resp, err := http.Get("http://" + srv.Addr() + "/connectors/A-%3EB.MirrorCheckpointConnector/config")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var got map[string]string
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	for k, want := range map[string]string{
		"name":                                   "A->B.MirrorCheckpointConnector",
		"connector.class":                        "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"source.cluster.alias":                   "A",
		"target.cluster.alias":                   "B",
		"source.cluster.bootstrap.servers":       "a1:9092",
		"source.cluster.sasl.mechanism":          "PLAIN",
		"source.cluster.sasl.jaas.config":        "[hidden]",
		"target.cluster.ssl.truststore.password": "[hidden]",
		"tasks.max":                              "3",
		"topics":                                 "orders.*",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	if strings.Contains(string(body), "s3cret") || strings.Contains(string(body), "changeit") {
		t.Errorf("secret leaked: %s", body)
	}
}
