package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
)

// clientJKS makes a JKS key store holding a client certificate signed by the bed's CA, and a JKS
// trust store holding that CA, with keytool and openssl as a Java shop would.
func clientJKS(t *testing.T, bed *testbed.Bed) (keystore, truststore string) {
	t.Helper()
	for _, tool := range []string{"keytool", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for this test: %v", tool, err)
		}
	}
	dir := t.TempDir()
	ca, caKey := filepath.Join(bed.Dir, "pki", "ca.crt"), filepath.Join(bed.Dir, "pki", "ca.key")
	keystore, truststore = filepath.Join(dir, "client.keystore.jks"), filepath.Join(dir, "client.truststore.jks")
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("keytool", "-genkeypair", "-alias", "client", "-keyalg", "RSA", "-keysize", "2048", "-keystore", keystore, "-storetype", "JKS",
		"-storepass", "store-secret", "-keypass", "key-secret", "-dname", "CN=kmm-e2e-client", "-validity", "2")
	run("keytool", "-certreq", "-alias", "client", "-keystore", keystore, "-storepass", "store-secret", "-keypass", "key-secret", "-file", "client.csr")
	run("openssl", "x509", "-req", "-in", "client.csr", "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-CAserial", filepath.Join(dir, "ca.srl"), "-out", "client.crt", "-days", "2")
	run("keytool", "-importcert", "-alias", "ca", "-file", ca, "-keystore", keystore, "-storepass", "store-secret", "-noprompt")
	run("keytool", "-importcert", "-alias", "client", "-file", "client.crt", "-keystore", keystore, "-storepass", "store-secret", "-keypass", "key-secret")
	run("keytool", "-importcert", "-alias", "ca", "-file", ca, "-keystore", truststore, "-storetype", "JKS", "-storepass", "trust-secret", "-noprompt")
	return keystore, truststore
}

// A flow whose source is reached over mutual TLS with JKS stores (the seed tutorial's shape) and
// whose target is reached with SASL/SCRAM replicates; explain never shows a secret.
func TestReplicateOverTLSAndSASL(t *testing.T) {
	bed := testbed.Attach(t)
	ks, ts := clientJKS(t, bed)
	topic := testbed.Unique(t, "tls")
	bed.A.CreateTopic(t, topic, 2, nil)
	bed.A.Produce(t, seqRecords(topic, 2, 0, 5000))
	props := writeProps(t,
		"A.bootstrap.servers = "+bed.A.SSL,
		"A.security.protocol = SSL",
		"A.ssl.truststore.location = "+ts,
		"A.ssl.truststore.password = trust-secret",
		"A.ssl.keystore.location = "+ks,
		"A.ssl.keystore.password = store-secret",
		"A.ssl.key.password = key-secret",
		"B.bootstrap.servers = "+bed.B.SASL,
		"B.security.protocol = SASL_PLAINTEXT",
		"B.sasl.mechanism = SCRAM-SHA-512",
		`B.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";`,
		"A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic))

	r := Run(t, "config", "explain", props, "--flow", "A->B")
	if r.Code != 0 {
		t.Fatalf("explain exit %d\n%s", r.Code, r.Stderr)
	}
	for _, secret := range []string{"trust-secret", "store-secret", "key-secret", "admin-secret"} {
		if strings.Contains(r.Stdout+r.Stderr, secret) {
			t.Fatalf("config explain printed the secret %q", secret)
		}
	}
	if !strings.Contains(r.Stdout, "[hidden]") {
		t.Fatalf("explain shows no redacted value:\n%s", r.Stdout)
	}

	p := startKMM(t, "replicate", props)
	waitCount(t, bed.B, "A."+topic, 2, 5000, time.Minute)
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if lost, dups := audit(t, bed.B, "A."+topic, 2, 5000); lost != 0 || dups != 0 {
		t.Fatalf("%d lost, %d duplicates", lost, dups)
	}
	for _, secret := range []string{"trust-secret", "store-secret", "key-secret", "admin-secret"} {
		if strings.Contains(p.stderr.String()+p.stdout.String(), secret) {
			t.Fatalf("replicate logged the secret %q", secret)
		}
	}

	// A wrong key store password is a configuration error naming the file and key, exit 2.
	bad := writeProps(t, "A.security.protocol = SSL", "A.ssl.keystore.location = "+ks, "A.ssl.keystore.password = wrong-pass",
		"A.ssl.key.password = key-secret", "A.ssl.truststore.location = "+ts, "A.ssl.truststore.password = trust-secret", "A->B.enabled = true")
	r = Run(t, "replicate", bad)
	if r.Code != 2 || !strings.Contains(r.Stderr, "mm2.properties:") || !strings.Contains(r.Stderr, "password") || strings.Contains(r.Stderr, "wrong-pass") {
		t.Fatalf("wrong password: exit %d\n%s", r.Code, r.Stderr)
	}
}
