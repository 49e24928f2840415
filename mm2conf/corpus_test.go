package mm2conf

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"io/fs"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/mm2")

const corpusDir = "../testdata/mm2"

// caseSpec is the optional <name>.case.json of a corpus case.
type caseSpec struct {
	Config              string            `json:"config"`
	Clusters            []string          `json:"clusters"`
	SourceClusterConfig string            `json:"source_cluster_config"`
	TargetClusterConfig string            `json:"target_cluster_config"`
	Whitelist           *string           `json:"whitelist"`
	Env                 map[string]string `json:"env"`
	// Stores: the case needs key stores made at test time (keytool).
	Stores bool `json:"stores"`
}

// corpusFS reads corpus files relative to testdata/mm2, substitutes
// placeholders (@TMP@, the directory of the key stores made at test time)
// in properties files, and maps the seed's absolute key store paths to
// stores made at test time.
type corpusFS struct {
	tmp  string
	virt map[string]string
}

func (c *corpusFS) path(name string) string {
	if p, ok := c.virt[name]; ok {
		return p
	}
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(corpusDir, name)
}

func (c *corpusFS) ReadFile(name string) ([]byte, error) {
	b, err := os.ReadFile(c.path(name))
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(name, ".properties") && c.tmp != "" {
		b = bytes.ReplaceAll(b, []byte("@TMP@"), []byte(c.tmp))
	}
	return b, nil
}

func (c *corpusFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(c.path(name)) }

// goldenForm is the resolved form stored in <name>.golden.json.
type goldenForm struct {
	Error string       `json:"error,omitempty"`
	Check *CheckReport `json:"check"`
	// Explain: flow -> section -> "key = value    <- origin" lines. Client
	// sections are those of the roles the flow uses.
	Explain map[string]map[string][]string `json:"explain"`
}

func compactExplain(c *Config, flows []ExplainFlow) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, f := range flows {
		used := map[string]bool{"connector": true, "worker": true}
		for _, r := range c.Flow(f.Name).usedRoles() {
			used[r] = true
			used[r+" (librdkafka)"] = true
		}
		secs := map[string][]string{}
		for _, s := range f.Sections {
			if !used[s.Name] {
				continue
			}
			lines := []string{}
			for _, e := range s.Entries {
				o := e.Origin.Rule
				if e.Origin.Position != "" || e.Origin.Key != "" {
					o = strings.TrimSpace(e.Origin.Position+" "+e.Origin.Key) + " (" + e.Origin.Rule + ")"
				}
				lines = append(lines, e.Key+" = "+e.Value+"    <- "+o)
			}
			secs[s.Name] = lines
		}
		out[f.Name] = secs
	}
	return out
}

var (
	storesOnce sync.Once
	storesDir  string
	storesErr  string
)

// makeStores creates key stores with keytool and PEM files with Go, once.
func makeStores(t *testing.T) string {
	t.Helper()
	if testing.Short() && os.Getenv("KMM_REQUIRE_TOOLS") != "1" {
		t.Skip("-short (make unit): cases that need key stores (keytool) run in make test")
	}
	storesOnce.Do(func() {
		if _, err := exec.LookPath("keytool"); err != nil {
			storesErr = "keytool not found"
			return
		}
		dir, err := os.MkdirTemp("", "mm2conf-stores-")
		if err != nil {
			storesErr = err.Error()
			return
		}
		storesDir = dir
		run := func(args ...string) {
			if storesErr != "" {
				return
			}
			out, err := exec.Command("keytool", args...).CombinedOutput()
			if err != nil {
				storesErr = "keytool " + strings.Join(args, " ") + ": " + string(out)
			}
		}
		mk := func(sub, typ, storePass, keyPass, trustPass string) {
			d := filepath.Join(dir, sub)
			_ = os.MkdirAll(d, 0o755)
			ext := ".jks"
			if typ == "PKCS12" {
				ext = ".p12"
			}
			ks, ts, cert := filepath.Join(d, "keystore"+ext), filepath.Join(d, "truststore"+ext), filepath.Join(d, "cert.pem")
			run("-genkeypair", "-alias", "client", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=kmm-test", "-validity", "30",
				"-keystore", ks, "-storetype", typ, "-storepass", storePass, "-keypass", keyPass)
			run("-exportcert", "-alias", "client", "-keystore", ks, "-storetype", typ, "-storepass", storePass, "-rfc", "-file", cert)
			run("-importcert", "-noprompt", "-alias", "ca", "-file", cert, "-keystore", ts, "-storetype", typ, "-storepass", trustPass)
		}
		mk("seed", "JKS", "keystore-password", "key-password", "truststore-password")
		mk("changeit", "JKS", "changeit", "changeit", "changeit")
		mk("jks", "JKS", "ks-secret", "key-secret", "ts-secret")
		mk("p12", "PKCS12", "p12-secret", "p12-secret", "p12-secret")
		if storesErr == "" {
			storesErr = makePEM(filepath.Join(dir, "pem"))
		}
	})
	if storesErr != "" {
		if os.Getenv("KMM_REQUIRE_TOOLS") == "1" {
			t.Fatalf("cannot make key stores: %s", storesErr)
		}
		t.Skipf("cannot make key stores: %s", storesErr)
	}
	return storesDir
}

func makePEM(dir string) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err.Error()
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err.Error()
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kmm-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(30 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		return err.Error()
	}
	p8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err.Error()
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8})
	keystore := append(append([]byte{}, keyPEM...), certPEM...)
	for name, b := range map[string][]byte{"cert.pem": certPEM, "key.pem": keyPEM, "ca.pem": certPEM, "keystore.pem": keystore} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err.Error()
		}
	}
	return ""
}

// seedStorePaths maps the seed's absolute paths to stores made at test time.
func seedStorePaths(dir string) map[string]string {
	m := map[string]string{}
	for _, side := range []string{"source", "target"} {
		m["/path/to/"+side+"/truststore.jks"] = filepath.Join(dir, "seed", "truststore.jks")
		m["/path/to/"+side+"/keystore.jks"] = filepath.Join(dir, "seed", "keystore.jks")
		m["/etc/kafka/"+side+".truststore.jks"] = filepath.Join(dir, "changeit", "truststore.jks")
		m["/etc/kafka/"+side+".keystore.jks"] = filepath.Join(dir, "changeit", "keystore.jks")
	}
	return m
}

type corpusCase struct {
	name string
	spec caseSpec
}

func corpusCases(t *testing.T) []corpusCase {
	ents, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusCase
	for _, e := range ents {
		n := e.Name()
		switch {
		case strings.HasSuffix(n, ".case.json"):
			var spec caseSpec
			b, err := os.ReadFile(filepath.Join(corpusDir, n))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &spec); err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			out = append(out, corpusCase{name: strings.TrimSuffix(n, ".case.json"), spec: spec})
		case strings.HasSuffix(n, ".properties"):
			base := strings.TrimSuffix(n, ".properties")
			if _, err := os.Stat(filepath.Join(corpusDir, base+".case.json")); err == nil {
				continue
			}
			out = append(out, corpusCase{name: base, spec: caseSpec{Config: n}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// normalise makes a golden independent of the test-time directory and of
// the random certificates.
func normalise(s, tmp string) string {
	if tmp != "" {
		s = strings.ReplaceAll(s, tmp, "@TMP@")
	}
	return s
}

func scrubPEM(flows []ExplainFlow) {
	for i := range flows {
		for j := range flows[i].Sections {
			for k := range flows[i].Sections[j].Entries {
				e := &flows[i].Sections[j].Entries[k]
				if strings.Contains(e.Value, "-----BEGIN") || strings.HasPrefix(e.Value, "(PEM: ") {
					e.Value = "<PEM>"
				}
			}
		}
	}
}

func loadCase(t *testing.T, cc corpusCase) (*Config, error, string) {
	t.Helper()
	fsys := &corpusFS{virt: map[string]string{}}
	if cc.spec.Stores || strings.HasPrefix(cc.name, "seed") || strings.HasPrefix(cc.name, "ssl-") {
		dir := makeStores(t)
		fsys.tmp = dir
		for k, v := range seedStorePaths(dir) {
			fsys.virt[k] = v
		}
	}
	env := cc.spec.Env
	opts := LoadOptions{
		ConfigFile: cc.spec.Config, Clusters: cc.spec.Clusters,
		SourceClusterConfig: cc.spec.SourceClusterConfig, TargetClusterConfig: cc.spec.TargetClusterConfig,
		Whitelist: cc.spec.Whitelist, FS: fsys,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}
	c, err := Load(opts)
	return c, err, fsys.tmp
}

// TestCorpus resolves every file of testdata/mm2 and compares the resolved
// form with its golden (go test ./mm2conf -update rewrites them).
func TestCorpus(t *testing.T) {
	cases := corpusCases(t)
	if len(cases) < 45 {
		t.Errorf("corpus has %d cases, want at least 45", len(cases))
	}
	for _, cc := range cases {
		t.Run(cc.name, func(t *testing.T) {
			c, err, tmp := loadCase(t, cc)
			g := goldenForm{Check: NewCheckReport(c, ReportOptions{})}
			if err != nil {
				g.Error = err.Error()
			}
			ex, xerr := NewExplainReport(c, ExplainOptions{})
			if xerr != nil {
				t.Fatal(xerr)
			}
			scrubPEM(ex.Flows)
			g.Explain = compactExplain(c, ex.Flows)
			var buf bytes.Buffer
			if err := writeJSON(&buf, g); err != nil {
				t.Fatal(err)
			}
			got := normalise(buf.String(), tmp)
			for _, secret := range []string{"ks-secret", "key-secret", "ts-secret", "p12-secret", "keystore-password", "truststore-password", "key-password", "changeit", "s3cr3t", "hunter2", "alice-secret"} {
				if strings.Contains(got, secret) {
					t.Errorf("the resolved form shows the secret %q", secret)
				}
			}
			golden := filepath.Join(corpusDir, cc.name+".golden.json")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, rerr := os.ReadFile(golden)
			if rerr != nil {
				t.Fatalf("%v (run go test ./mm2conf -update)", rerr)
			}
			if got != string(want) {
				t.Errorf("%s differs from the golden; diff with -update and git diff.\nerror: %v", cc.name, err)
			}
		})
	}
}

// TestCorpusMalformed: every malformed-* case fails with the error its
// .error file names (file:line: error: message), first line of the error.
func TestCorpusMalformed(t *testing.T) {
	n := 0
	for _, cc := range corpusCases(t) {
		if !strings.HasPrefix(cc.name, "malformed-") {
			continue
		}
		n++
		t.Run(cc.name, func(t *testing.T) {
			c, err, tmp := loadCase(t, cc)
			if err == nil {
				t.Fatalf("%s loads without error", cc.name)
			}
			wantB, rerr := os.ReadFile(filepath.Join(corpusDir, cc.name+".error"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			want := strings.TrimSpace(string(wantB))
			var errs []string
			for _, d := range c.Diagnostics.Errors() {
				errs = append(errs, normalise(d.String(), tmp))
			}
			if !contains(errs, want) {
				t.Errorf("%s: want the error\n  %s\ngot\n  %s", cc.name, want, strings.Join(errs, "\n  "))
			}
		})
	}
	if n < 15 {
		t.Errorf("only %d malformed cases, want at least 15", n)
	}
}
