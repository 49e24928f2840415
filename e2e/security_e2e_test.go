package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// securePKI makes, with keytool and openssl as a Java shop would, a PKCS12 key store holding a
// client certificate signed by the bed's CA (store and key password storePass) and a PKCS12 trust
// store holding the CA (password trustPass). It returns their paths and the client's private key
// in PEM, whose lines must never appear in any output.
func securePKI(t *testing.T, bed *testbed.Bed, storePass, trustPass string) (keystore, truststore string, keyPEM []byte) {
	t.Helper()
	for _, tool := range []string{"keytool", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for this test: %v", tool, err)
		}
	}
	dir := t.TempDir()
	ca, caKey := filepath.Join(bed.Dir, "pki", "ca.crt"), filepath.Join(bed.Dir, "pki", "ca.key")
	keystore, truststore = filepath.Join(dir, "client.keystore.p12"), filepath.Join(dir, "client.truststore.p12")
	run := func(name string, args ...string) []byte {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return out
	}
	run("keytool", "-genkeypair", "-alias", "client", "-keyalg", "RSA", "-keysize", "2048", "-keystore", keystore, "-storetype", "PKCS12",
		"-storepass", storePass, "-dname", "CN=kmm-e2e-secure", "-validity", "2")
	run("keytool", "-certreq", "-alias", "client", "-keystore", keystore, "-storepass", storePass, "-file", "client.csr")
	run("openssl", "x509", "-req", "-in", "client.csr", "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-CAserial", filepath.Join(dir, "ca.srl"), "-out", "client.crt", "-days", "2")
	run("keytool", "-importcert", "-alias", "ca", "-file", ca, "-keystore", keystore, "-storepass", storePass, "-noprompt")
	run("keytool", "-importcert", "-alias", "client", "-file", "client.crt", "-keystore", keystore, "-storepass", storePass)
	run("keytool", "-importcert", "-alias", "ca", "-file", ca, "-keystore", truststore, "-storetype", "PKCS12", "-storepass", trustPass, "-noprompt")
	keyPEM = run("openssl", "pkcs12", "-in", keystore, "-nocerts", "-nodes", "-passin", "pass:"+storePass)
	return keystore, truststore, keyPEM
}

// keyFragments are pieces of a private key's encodings that a leak would show: the base64 body
// lines of its PEM and the base64 of its DER at the start.
func keyFragments(t *testing.T, keyPEM []byte) []string {
	t.Helper()
	blk, _ := pem.Decode(keyPEM[bytes.Index(keyPEM, []byte("-----BEGIN")):])
	if blk == nil {
		t.Fatalf("no PEM key in %q", keyPEM)
	}
	b64 := base64.StdEncoding.EncodeToString(blk.Bytes)
	// 48 characters from the middle of the key: long enough to be unique, short enough to be
	// found in a line-wrapped or a JSON-escaped dump.
	return []string{b64[200:248], b64[len(b64)/2 : len(b64)/2+48]}
}

// Every command of kmm over authenticated, encrypted connections as MM2 files name them: the
// source over SASL_SSL with SCRAM-SHA-512 (trust store PKCS12), the target over mutual TLS (key
// store PKCS12, trust store PEM), every password through ${file:...} or ${env:...} config
// providers. replicate (with its /metrics and /connectors), status, lag, translate-offsets,
// verify (JUnit too), failover (report file) and failback run and do their job; no password and
// no piece of the private key appears in any output, log, plan, report, JUnit file or metric.
func TestSecureCommandsEndToEnd(t *testing.T) {
	bed := testbed.Attach(t)
	const (
		alicePass = "alice-secret"       // SCRAM password of alice on every cluster (the bed's)
		storePass = "p12-store-Zq81xv"   // client key store (and key) password
		trustPass = "p12-trust-Hh27pa"   // trust store password
		envVar    = "KMM_E2E_TRUST_PASS" // the trust store password comes from the environment
	)
	ks, ts, keyPEM := securePKI(t, bed, storePass, trustPass)
	t.Setenv(envVar, trustPass)
	secrets := filepath.Join(t.TempDir(), "secrets.properties")
	if err := os.WriteFile(secrets, []byte("alice.password="+alicePass+"\nstore.password="+storePass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	forbidden := append([]string{alicePass, storePass, trustPass}, keyFragments(t, keyPEM)...)

	al := newAliases()
	topic := testbed.Unique(t, "sec")
	group := testbed.Unique(t, "secgrp")
	const parts, n = 2, 400
	bed.A.CreateTopic(t, topic, parts, nil)
	ab, ba := al.A+"->"+al.B, al.B+"->"+al.A
	q := regexp.QuoteMeta(topic)
	jaas := `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="${file:` + secrets + `:alice.password}";`
	security := []string{
		"config.providers = file, env",
		"config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider",
		"config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"groups = " + regexp.QuoteMeta(group),
		al.A + ".bootstrap.servers = " + bed.A.SASLSSL,
		al.A + ".security.protocol = SASL_SSL",
		al.A + ".sasl.mechanism = SCRAM-SHA-512",
		al.A + ".sasl.jaas.config = " + jaas,
		al.A + ".ssl.truststore.type = PKCS12",
		al.A + ".ssl.truststore.location = " + ts,
		al.A + ".ssl.truststore.password = ${env:" + envVar + "}",
		al.B + ".bootstrap.servers = " + bed.B.SSL,
		al.B + ".security.protocol = SSL",
		al.B + ".ssl.keystore.type = PKCS12",
		al.B + ".ssl.keystore.location = " + ks,
		al.B + ".ssl.keystore.password = ${file:" + secrets + ":store.password}",
		al.B + ".ssl.key.password = ${file:" + secrets + ":store.password}",
		al.B + ".ssl.truststore.type = PEM",
		al.B + ".ssl.truststore.location = " + filepath.Join(bed.Dir, "pki", "ca.crt"),
	}
	// interopProps sets each alias's bootstrap to the PLAINTEXT listener first; the lines here
	// come later and win (last one wins, as in Java's Properties).
	props := interopProps(t, bed, al, 2, append(security, ab+".enabled = true", ab+".topics = "+q, ba+".topics = "+q)...)
	revProps := interopProps(t, bed, al, 2, append(security, ab+".enabled = false", ba+".enabled = true", ba+".topics = "+q)...)
	if raw, _ := os.ReadFile(props); bytes.Contains(raw, []byte(alicePass)) || bytes.Contains(raw, []byte(storePass)) || bytes.Contains(raw, []byte(trustPass)) {
		t.Fatal("the test's properties file holds a password itself: the providers are not exercised")
	}

	var seen bytes.Buffer // everything kmm printed, wrote or served
	record := func(what string, b []byte) { fmt.Fprintf(&seen, "\n=== %s\n%s", what, b) }
	run := func(want int, args ...string) Result {
		t.Helper()
		r := Run(t, args...)
		record(strings.Join(args[:1], " ")+" stdout", []byte(r.Stdout))
		record(strings.Join(args[:1], " ")+" stderr", []byte(r.Stderr))
		if r.Code != want {
			t.Fatalf("kmm %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), r.Code, want, r.Stdout, r.Stderr)
		}
		return r
	}
	readFile := func(what, p string) []byte {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		record(what, b)
		return b
	}

	run(0, "config", "explain", props, "--flow", ab)
	run(0, "config", "check", props)

	// replicate A->B over SASL_SSL -> mTLS, serving metrics.
	k := startKMM(t, "replicate", props, "--listen", "127.0.0.1:0", "--log-level", "debug")
	base := listenBase(t, k)
	bed.A.Produce(t, seqRecords(topic, parts, 0, n))
	setOffsets(t, bed.A, group, topic, 150, 120)
	waitCount(t, bed.B, topic, parts, n, 2*time.Minute)
	// The group's checkpoint arrives on B (translate-offsets reads it over mTLS).
	testbed.Eventually(t, 60*time.Second, func() error {
		r := Run(t, "translate-offsets", props, "--flow", ab, "--group", group, "-o", "json")
		if r.Code != 0 {
			return fmt.Errorf("translate-offsets exit %d: %s", r.Code, tail(r.Stderr, 5))
		}
		// Both partitions' checkpoints (the translation itself comes from the offset map).
		if !strings.Contains(r.Stdout, `"checkpoint_offset": 150`) || !strings.Contains(r.Stdout, `"checkpoint_offset": 120`) {
			return fmt.Errorf("no checkpoint yet: %s", tail(r.Stdout, 20))
		}
		record("translate-offsets stdout", []byte(r.Stdout))
		record("translate-offsets stderr", []byte(r.Stderr))
		return nil
	})
	for _, path := range []string{"/metrics", "/connectors?expand=status", "/healthz", "/readyz"} {
		code, body, err := httpGet(base, path)
		if err != nil || code != 200 {
			t.Fatalf("GET %s: %d %v\n%s", path, code, err, body)
		}
		record("GET "+path, []byte(body))
		if path == "/metrics" && !strings.Contains(body, "kmm_") {
			t.Fatalf("/metrics serves no kmm series:\n%s", tail(body, 20))
		}
	}
	st := run(0, "status", props, "--flow", ab, "-o", "json")
	if !strings.Contains(st.Stdout, `"REPLICATING"`) && !strings.Contains(st.Stdout, `"OK"`) {
		t.Errorf("status over SASL_SSL/mTLS does not show the flow replicating:\n%s", st.Stdout)
	}
	lg := run(0, "lag", props, "--flow", ab, "-o", "json")
	if !strings.Contains(lg.Stdout, topic) {
		t.Errorf("lag does not list %s:\n%s", topic, lg.Stdout)
	}
	junit := filepath.Join(t.TempDir(), "verify.xml")
	vr := run(0, "verify", props, "--flow", ab, "--level", "sample", "--junit", junit, "-o", "json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(vr.Stdout), &doc); err != nil {
		t.Fatalf("verify -o json: %v\n%s", err, vr.Stdout)
	}
	readFile("verify junit", junit)
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("replicate exit %d\n%s", code, tail(k.Stderr(), 30))
	}
	record("replicate stdout", k.stdout.Bytes())
	record("replicate stderr", []byte(k.Stderr()))
	if lost, dups := audit(t, bed.B, topic, parts, n); lost != 0 {
		t.Fatalf("replicate over SASL_SSL -> mTLS: %d lost (%d duplicates)", lost, dups)
	}

	// Planned failover, then failback with the reverse flow running over the same connections.
	report := filepath.Join(t.TempDir(), "failover.md")
	run(0, "failover", props, "--flow", ab, "--group", group, "--quiet-for", "1s", "--timeout", "2m", "--dry-run", "-o", "json")
	fo := run(0, "failover", props, "--flow", ab, "--group", group, "--quiet-for", "1s", "--timeout", "2m", "--yes", "-o", "json", "--report", report)
	if !strings.Contains(fo.Stdout, group) {
		t.Errorf("failover report names no group:\n%s", fo.Stdout)
	}
	readFile("failover report", report)
	produceValues(t, bed.B, topic, parts, 10, "post")
	kr := startKMM(t, "replicate", revProps)
	waitCount(t, bed.A, topic, parts, n+10, 2*time.Minute)
	run(0, "failback", props, "--flow", ab, "--group", group, "--quiet-for", "1s", "--timeout", "2m", "--dry-run", "-o", "json")
	fb := run(0, "failback", props, "--flow", ab, "--group", group, "--quiet-for", "1s", "--timeout", "2m", "--yes", "-o", "json")
	if !strings.Contains(fb.Stdout, group) {
		t.Errorf("failback report names no group:\n%s", fb.Stdout)
	}
	if code := kr.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Errorf("replicate %s exit %d", ba, code)
	}
	record("reverse replicate stderr", []byte(kr.Stderr()))
	st = run(0, "status", props, "--flow", ab)

	// Also with line breaks and JSON escapes removed: a wrapped or escaped PEM body is a leak too.
	flat := strings.NewReplacer("\n", "", `\n`, "", `\/`, "/", `\u002b`, "+").Replace(seen.String())
	for _, s := range forbidden {
		if strings.Contains(flat, s) && !bytes.Contains(seen.Bytes(), []byte(s)) {
			t.Errorf("secret material %q… appears in kmm's output (across a line break or an escape)", s[:6])
		}
		if i := bytes.Index(seen.Bytes(), []byte(s)); i >= 0 {
			lo := bytes.LastIndex(seen.Bytes()[:i], []byte("\n=== "))
			t.Errorf("secret material %q… appears in kmm's output (%s)", s[:6], strings.SplitN(string(seen.Bytes()[lo+5:]), "\n", 2)[0])
		}
	}
	if seen.Len() < 10000 {
		t.Errorf("only %d bytes of output collected: the secret check saw too little", seen.Len())
	}
}

// allow is one ALLOW binding per operation for principal on a resource.
func allow(principal, rtype, name, pattern string, ops ...string) []rdkafka.ACL {
	out := make([]rdkafka.ACL, 0, len(ops))
	for _, op := range ops {
		out = append(out, rdkafka.ACL{ResourceType: rtype, ResourceName: name, PatternType: pattern, Principal: principal,
			Host: "*", Operation: op, Permission: "ALLOW"})
	}
	return out
}

// aclGrants are the rights a principal needs on the target of a flow S->T for `kmm replicate`
// with MM2's defaults (docs/security.md): remote and internal topics under S's prefix, kmm's and
// MM2's internal topics, and the cluster rights of ACL sync.
func aclGrants(principal, src string) []rdkafka.ACL {
	var out []rdkafka.ACL
	add := func(rtype, name, pattern string, ops ...string) {
		out = append(out, allow(principal, rtype, name, pattern, ops...)...)
	}
	// Remote topics, <S>.heartbeats and <S>.checkpoints.internal.
	add("TOPIC", src+".", "PREFIXED", "CREATE", "WRITE", "READ", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER", "ALTER_CONFIGS")
	// Resume positions (MM2's offsets topic of the flow), kmm's state topic, the heartbeats topic.
	add("TOPIC", "mm2-offsets."+src+".internal", "LITERAL", "CREATE", "WRITE", "READ", "DESCRIBE", "DESCRIBE_CONFIGS")
	// kmm's offset maps (where every copied record landed), beside the resume positions.
	add("TOPIC", "kmm-offset-map."+src+".internal", "LITERAL", "CREATE", "WRITE", "READ", "DESCRIBE", "DESCRIBE_CONFIGS")
	add("TOPIC", "__kmm_state", "LITERAL", "CREATE", "WRITE", "READ", "DESCRIBE", "DESCRIBE_CONFIGS")
	add("TOPIC", "heartbeats", "LITERAL", "CREATE", "WRITE", "READ", "DESCRIBE", "DESCRIBE_CONFIGS")
	// ACL sync (sync.topic.acls.enabled, on by default) creates ACLs.
	add("BROKER", "kafka-cluster", "LITERAL", "DESCRIBE", "ALTER") // librdkafka calls the CLUSTER resource BROKER
	// kmm's check that Apache MM2 does not run the same flow (its Connect group).
	add("GROUP", src+"-mm2", "LITERAL", "DESCRIBE")
	// kmm's assign-only readers carry a group.id (librdkafka looks up its coordinator; nothing is
	// ever committed under it).
	add("GROUP", "kmm-", "PREFIXED", "DESCRIBE")
	return out
}

// A principal with only the rights docs/security.md lists replicates (cluster C refuses anything
// no ACL allows); the same principal without WRITE on the remote topics gets exit 4 and a message
// naming the missing ACL and the command that grants it.
func TestACLLimitedPrincipal(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "acl")
	const parts, n = 2, 600
	bed.A.CreateTopic(t, topic, parts, nil)
	bed.A.Produce(t, seqRecords(topic, parts, 0, n/2))
	remote := al.A + "." + topic
	grants := aclGrants("User:bob", al.A)
	admin := bed.C.Admin(t)
	ctx := context.Background()
	if err := admin.CreateACLs(ctx, grants); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.DeleteACLs(context.Background(), grants...) })
	ac := al.A + "->" + al.C
	props := filepath.Join(t.TempDir(), "mm2.properties")
	lines := []string{
		"clusters = " + al.A + ", " + al.C,
		"replication.factor = 1", "checkpoints.topic.replication.factor = 1", "heartbeats.topic.replication.factor = 1",
		"offset-syncs.topic.replication.factor = 1", "refresh.topics.interval.seconds = 1",
		al.A + ".bootstrap.servers = " + bed.A.Bootstrap,
		al.C + ".bootstrap.servers = " + bed.C.SASLSSL,
		al.C + ".security.protocol = SASL_SSL",
		al.C + ".sasl.mechanism = SCRAM-SHA-512",
		al.C + `.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="bob-secret";`,
		al.C + ".ssl.truststore.type = PEM",
		al.C + ".ssl.truststore.location = " + filepath.Join(bed.Dir, "pki", "ca.crt"),
		al.C + ".offset.storage.replication.factor = 1",
		al.C + ".offset.flush.interval.ms = 300",
		ac + ".enabled = true", ac + ".topics = " + regexp.QuoteMeta(topic),
	}
	if err := os.WriteFile(props, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	k := startKMM(t, "replicate", props)
	waitCount(t, bed.C, remote, parts, n/2, 2*time.Minute)
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("replicate as the ACL-limited principal: exit %d\n%s", code, tail(k.Stderr(), 30))
	}
	if strings.Contains(k.Stderr(), "uthorization") || strings.Contains(k.Stderr(), "lacks the ACL") || strings.Contains(k.Stderr(), "warning") {
		t.Errorf("replicate with every documented right still met a refusal:\n%s", tail(k.Stderr(), 30))
	}

	// Without WRITE on the remote topics: exit 4, the ACL and its kafka-acls command named.
	var write []rdkafka.ACL
	for _, g := range grants {
		if g.Operation == "WRITE" && g.PatternType == "PREFIXED" {
			write = append(write, g)
		}
	}
	if err := admin.DeleteACLs(ctx, write...); err != nil {
		t.Fatal(err)
	}
	bed.A.Produce(t, seqRecords(topic, parts, n/2, n))
	k = startKMM(t, "replicate", props)
	select {
	case <-k.done:
	case <-time.After(90 * time.Second):
		t.Fatalf("replicate without WRITE still running after 90s\n%s", tail(k.Stderr(), 30))
	}
	code := k.cmd.ProcessState.ExitCode()
	// The refused topic is one of the remote topics: the records' or the heartbeats'.
	want := regexp.MustCompile(`User:bob lacks the ACL ALLOW WRITE on topic (` + regexp.QuoteMeta(al.A) + `\.\S+) `)
	m := want.FindStringSubmatch(k.Stderr())
	if code != 4 || m == nil || !strings.Contains(k.Stderr(), "--allow-principal User:bob --operation Write --topic "+m[1]) {
		t.Fatalf("replicate without WRITE: exit %d, want 4 and %q with the kafka-acls command\n%s", code, want, tail(k.Stderr(), 20))
	}
	if strings.Contains(k.Stderr(), "bob-secret") {
		t.Errorf("the refusal printed bob's password")
	}
}

// sourceGrants are the rights a principal needs on the source of a flow S->T (docs/security.md):
// read and describe the replicated topics and their configs, describe the cluster's ACLs (ACL
// sync) and the groups (checkpoints), MM2's offset-syncs topic (on the source by default) and the
// heartbeats topic the reverse herder writes.
func sourceGrants(principal, topic, tgt string) []rdkafka.ACL {
	var out []rdkafka.ACL
	add := func(rtype, name, pattern string, ops ...string) {
		out = append(out, allow(principal, rtype, name, pattern, ops...)...)
	}
	add("TOPIC", topic, "LITERAL", "READ", "DESCRIBE", "DESCRIBE_CONFIGS")
	add("TOPIC", "mm2-offset-syncs."+tgt+".internal", "LITERAL", "CREATE", "WRITE", "READ", "DESCRIBE", "DESCRIBE_CONFIGS")
	add("TOPIC", "heartbeats", "LITERAL", "CREATE", "WRITE", "READ", "DESCRIBE", "DESCRIBE_CONFIGS")
	add("BROKER", "kafka-cluster", "LITERAL", "DESCRIBE")
	add("GROUP", "kmm-", "PREFIXED", "DESCRIBE")
	return out
}

// The same on the source side: a closed cluster C read by bob with only sourceGrants replicates
// to A; without READ on the topic, exit 4 naming it.
func TestACLLimitedPrincipalSource(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "aclsrc")
	const parts, n = 2, 400
	bed.C.CreateTopic(t, topic, parts, nil)
	bed.C.Produce(t, seqRecords(topic, parts, 0, n))
	grants := sourceGrants("User:bob", topic, al.A)
	admin := bed.C.Admin(t)
	ctx := context.Background()
	if err := admin.CreateACLs(ctx, grants); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.DeleteACLs(context.Background(), grants...) })
	ca := al.C + "->" + al.A
	props := filepath.Join(t.TempDir(), "mm2.properties")
	lines := []string{
		"clusters = " + al.A + ", " + al.C,
		"replication.factor = 1", "checkpoints.topic.replication.factor = 1", "heartbeats.topic.replication.factor = 1",
		"offset-syncs.topic.replication.factor = 1", "refresh.topics.interval.seconds = 1",
		al.A + ".bootstrap.servers = " + bed.A.Bootstrap,
		al.A + ".offset.storage.replication.factor = 1",
		al.C + ".bootstrap.servers = " + bed.C.SASLSSL,
		al.C + ".security.protocol = SASL_SSL",
		al.C + ".sasl.mechanism = SCRAM-SHA-512",
		al.C + `.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="bob-secret";`,
		al.C + ".ssl.truststore.type = PEM",
		al.C + ".ssl.truststore.location = " + filepath.Join(bed.Dir, "pki", "ca.crt"),
		ca + ".enabled = true", ca + ".topics = " + regexp.QuoteMeta(topic),
	}
	if err := os.WriteFile(props, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k := startKMM(t, "replicate", props)
	waitCount(t, bed.A, al.C+"."+topic, parts, n, 2*time.Minute)
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("replicate from the ACL-limited source: exit %d\n%s", code, tail(k.Stderr(), 30))
	}
	if s := k.Stderr(); strings.Contains(s, "uthorization") || strings.Contains(s, "lacks the ACL") || strings.Contains(s, "warning") {
		t.Errorf("replicate with every documented source right still met a refusal:\n%s", tail(s, 30))
	}

	var read []rdkafka.ACL
	for _, g := range grants {
		if g.Operation == "READ" && g.ResourceName == topic {
			read = append(read, g)
		}
	}
	if err := admin.DeleteACLs(ctx, read...); err != nil {
		t.Fatal(err)
	}
	bed.C.Produce(t, seqRecords(topic, parts, n, n+100))
	k = startKMM(t, "replicate", props)
	select {
	case <-k.done:
	case <-time.After(90 * time.Second):
		t.Fatalf("replicate without READ still running after 90s\n%s", tail(k.Stderr(), 30))
	}
	code := k.cmd.ProcessState.ExitCode()
	want := "User:bob lacks the ACL ALLOW READ on topic " + topic
	if code != 4 || !strings.Contains(k.Stderr(), want) || !strings.Contains(k.Stderr(), "--operation Read --topic "+topic) {
		t.Fatalf("replicate without READ: exit %d, want 4 and %q\n%s", code, want, tail(k.Stderr(), 20))
	}
}
