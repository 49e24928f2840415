package clientconf

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kmmproject/kmm/mm2conf/clientconf/clientconftest"
)

var (
	pkiOnce  sync.Once
	pkiDir   string
	pkiPaths clientconftest.Paths
	pkiStore string
	pkiKey   string
	pkiOK    bool
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pkiDir != "" {
		os.RemoveAll(pkiDir)
	}
	os.Exit(code)
}

// pki returns the shared keytool-made CA, client and server material (made once per run).
func pki(t *testing.T) (clientconftest.Paths, string, string) {
	t.Helper()
	clientconftest.RequireTool(t, "keytool")
	pkiOnce.Do(func() {
		dir, err := os.MkdirTemp("", "clientconf-pki-")
		if err != nil {
			t.Fatal(err)
		}
		pkiDir = dir
		pkiPaths, pkiStore, pkiKey = clientconftest.MakeJKS(t, dir, "localhost", nil)
		pkiOK = true
	})
	if !pkiOK {
		t.Fatal("making the test PKI failed (see the first test that asked for it)")
	}
	return pkiPaths, pkiStore, pkiKey
}

// run runs a tool in dir and fails the test on error.
func run(t *testing.T, dir, tool string, args ...string) {
	t.Helper()
	cmd := exec.Command(tool, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
}

func keytool(t *testing.T, dir string, args ...string) {
	t.Helper()
	run(t, dir, clientconftest.RequireTool(t, "keytool"), append([]string{"-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"}, args...)...)
}

func openssl(t *testing.T, dir string, args ...string) {
	t.Helper()
	run(t, dir, clientconftest.RequireTool(t, "openssl"), args...)
}

func tlsProps(kv ...string) map[string]Prop {
	return withBootstrap(props(append([]string{"security.protocol", "SSL"}, kv...)...))
}

// checkMaterial verifies the PEMs Translate produced: the key parses (unencrypted PKCS#8),
// matches the certificate, and the certificate chains to the CA in ssl.ca.pem (if present).
func checkMaterial(t *testing.T, r Result, wantCN string) {
	t.Helper()
	for _, d := range r.Diags {
		if d.Severity == Error {
			t.Fatalf("unexpected error: %s", d)
		}
	}
	certPEM, keyPEM := r.Config["ssl.certificate.pem"], r.Config["ssl.key.pem"]
	if certPEM == "" || keyPEM == "" {
		t.Fatalf("no client certificate/key in %v", redacted(r))
	}
	if !r.Secret["ssl.key.pem"] || r.Secret["ssl.certificate.pem"] {
		t.Errorf("secret marks: key %v cert %v", r.Secret["ssl.key.pem"], r.Secret["ssl.certificate.pem"])
	}
	blk, rest := pem.Decode([]byte(keyPEM))
	if blk == nil || blk.Type != "PRIVATE KEY" || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("ssl.key.pem is not one unencrypted PKCS#8 block")
	}
	if _, err := x509.ParsePKCS8PrivateKey(blk.Bytes); err != nil {
		t.Fatalf("ssl.key.pem: %v", err)
	}
	pair, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
	if err != nil {
		t.Fatalf("certificate and key do not match: %v", err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	if wantCN != "" && leaf.Subject.CommonName != wantCN {
		t.Errorf("leaf CN %q, want %q", leaf.Subject.CommonName, wantCN)
	}
	if ca := r.Config["ssl.ca.pem"]; ca != "" {
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM([]byte(ca)) {
			t.Fatal("ssl.ca.pem holds no certificates")
		}
		inter := x509.NewCertPool()
		for _, der := range pair.Certificate[1:] {
			c, _ := x509.ParseCertificate(der)
			inter.AddCert(c)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			t.Errorf("client certificate does not chain to ssl.ca.pem: %v", err)
		}
	}
}

func TestTLSJKS(t *testing.T) {
	p, sp, kp := pki(t)
	r := Translate(tlsProps(
		"ssl.truststore.location", p.TruststoreJKS, "ssl.truststore.password", sp,
		"ssl.keystore.location", p.KeystoreJKS, "ssl.keystore.password", sp, "ssl.key.password", kp,
	), Consumer, Options{})
	expectDiags(t, r.Diags, nil)
	checkMaterial(t, r, p.ClientCN)
	if r.Config["ssl.endpoint.identification.algorithm"] != "https" || r.Origin["ssl.endpoint.identification.algorithm"] != OriginJavaDefault {
		t.Errorf("endpoint identification: %q from %q", r.Config["ssl.endpoint.identification.algorithm"], r.Origin["ssl.endpoint.identification.algorithm"])
	}
	for _, k := range []string{"ssl.keystore.location", "ssl.keystore.password", "ssl.truststore.location", "ssl.key.password", "ssl.ca.location", "ssl.key.password"} {
		if _, ok := r.Config[k]; ok {
			t.Errorf("%s must not be passed to librdkafka", k)
		}
	}
	if !strings.Contains(r.Origin["ssl.key.pem"], "ssl.key.password") {
		t.Errorf("origin of ssl.key.pem = %q", r.Origin["ssl.key.pem"])
	}
}

func TestTLSPKCS12(t *testing.T) {
	p, sp, _ := pki(t)
	r := Translate(tlsProps(
		"ssl.truststore.type", "PKCS12", "ssl.truststore.location", p.TruststoreP12, "ssl.truststore.password", sp,
		"ssl.keystore.type", "pkcs12", "ssl.keystore.location", p.KeystoreP12, "ssl.keystore.password", sp,
	), Producer, Options{})
	expectDiags(t, r.Diags, nil)
	checkMaterial(t, r, p.ClientCN)
}

func TestTLSTypeSniffing(t *testing.T) {
	p, sp, kp := pki(t)
	// PKCS12 files with the Java default type JKS (and the reverse): Java 9+ reads them; so do we, with a warning.
	r := Translate(tlsProps(
		"ssl.truststore.location", p.TruststoreP12, "ssl.truststore.password", sp,
		"ssl.keystore.type", "PKCS12", "ssl.keystore.location", p.KeystoreJKS, "ssl.keystore.password", sp, "ssl.key.password", kp,
	), Producer, Options{})
	expectDiags(t, r.Diags, []string{
		"W:ssl.truststore.type is not set, so Java's default JKS but " + p.TruststoreP12 + " is a PKCS12 file",
		"W:ssl.keystore.type declares PKCS12 but " + p.KeystoreJKS + " is a JKS file; reading it as JKS",
	})
	checkMaterial(t, r, p.ClientCN)

	runCases(t, []tcase{
		{name: "PEM type, JKS file", in: []string{"security.protocol", "SSL", "ssl.truststore.type", "PEM", "ssl.truststore.location", p.TruststoreJKS},
			diags: []string{"E:ssl.truststore.type: ssl.truststore.type=PEM but " + p.TruststoreJKS + " is a JKS store"}},
		{name: "JKS type, PEM file", in: []string{"security.protocol", "SSL", "ssl.truststore.location", p.CA},
			diags: []string{"E:ssl.truststore.type is JKS but " + p.CA + " is a PEM file"}},
		{name: "JCEKS type", in: []string{"security.protocol", "SSL", "ssl.truststore.type", "JCEKS", "ssl.truststore.location", p.TruststoreJKS},
			diags: []string{"E:JCEKS is not supported"}},
		{name: "PKCS11 type", in: []string{"security.protocol", "SSL", "ssl.keystore.type", "PKCS11", "ssl.keystore.location", "NONE", "ssl.keystore.password", "x"},
			diags: []string{"E:key store type \"PKCS11\" is not supported"}},
	})
}

func TestTLSWrongPasswordsAndFiles(t *testing.T) {
	p, sp, kp := pki(t)
	const wrong = "WRONG-PASSWORD-value"
	cases := []tcase{
		{name: "truststore password", in: []string{"security.protocol", "SSL", "ssl.truststore.location", p.TruststoreJKS, "ssl.truststore.password", wrong},
			diags: []string{"E:t.properties:3: error: ssl.truststore.password: wrong password for trust store " + p.TruststoreJKS + " (ssl.truststore.password)"}},
		{name: "truststore P12 password", in: []string{"security.protocol", "SSL", "ssl.truststore.type", "PKCS12", "ssl.truststore.location", p.TruststoreP12, "ssl.truststore.password", wrong},
			diags: []string{"E:ssl.truststore.password: wrong password for trust store " + p.TruststoreP12}},
		{name: "JKS truststore without password", in: []string{"security.protocol", "SSL", "ssl.truststore.location", p.TruststoreJKS},
			want: map[string]string{"ssl.ca.pem": readCA(t, p.CA)}},
		{name: "keystore store password", in: []string{"security.protocol", "SSL", "ssl.keystore.location", p.KeystoreJKS, "ssl.keystore.password", wrong, "ssl.key.password", kp},
			diags: []string{"E:ssl.keystore.password: wrong password for key store " + p.KeystoreJKS + " (ssl.keystore.password)"}},
		{name: "key password", in: []string{"security.protocol", "SSL", "ssl.keystore.location", p.KeystoreJKS, "ssl.keystore.password", sp, "ssl.key.password", wrong},
			diags: []string{`E:ssl.key.password: cannot decrypt private key "client" in ` + p.KeystoreJKS + ": wrong ssl.key.password"}},
		{name: "key password missing", in: []string{"security.protocol", "SSL", "ssl.keystore.location", p.KeystoreJKS, "ssl.keystore.password", sp},
			diags: []string{"E:ssl.keystore.location: cannot decrypt private key \"client\" in " + p.KeystoreJKS + ": wrong ssl.keystore.password (used because ssl.key.password is not set)"}},
		{name: "keystore without password", in: []string{"security.protocol", "SSL", "ssl.keystore.location", p.KeystoreJKS},
			diags: []string{"E:key store " + p.KeystoreJKS + " needs a password: ssl.keystore.password is not set"}},
		{name: "P12 keystore password", in: []string{"security.protocol", "SSL", "ssl.keystore.type", "PKCS12", "ssl.keystore.location", p.KeystoreP12, "ssl.keystore.password", wrong},
			diags: []string{"E:ssl.keystore.password: wrong password for key store " + p.KeystoreP12}},
		{name: "missing truststore", in: []string{"security.protocol", "SSL", "ssl.truststore.location", "/no/such/truststore.jks", "ssl.truststore.password", sp},
			diags: []string{"E:ssl.truststore.location: trust store file /no/such/truststore.jks does not exist"}},
		{name: "missing keystore", in: []string{"security.protocol", "SSL", "ssl.keystore.location", "/no/such/ks.p12", "ssl.keystore.password", sp},
			diags: []string{"E:key store file /no/such/ks.p12 does not exist"}},
		{name: "password without location", in: []string{"security.protocol", "SSL", "ssl.keystore.password", sp}, diags: []string{"E:ssl.keystore.password is set but ssl.keystore.location is not"}},
		{name: "not a store", in: []string{"security.protocol", "SSL", "ssl.truststore.location", "/etc/hostname"}, diags: []string{"E:is not a JKS, PKCS12 or PEM file"}},
		{name: "SSL keys unused with PLAINTEXT", in: []string{"security.protocol", "PLAINTEXT", "ssl.truststore.location", "/no/such/file"}, ignored: []string{"ssl.truststore.location"}},
		{name: "SSL keys without protocol", in: []string{"ssl.truststore.location", "/no/such/file"}, diags: []string{"W:ssl.* settings are present but security.protocol is not set"}},
	}
	for i := range cases {
		cases[i].role = Consumer
	}
	// These use real files.
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Translate(withBootstrap(props(c.in...)), c.role, Options{})
			for k, w := range c.want {
				if res.Config[k] != w {
					t.Errorf("%s = %q, want %q", k, res.Config[k], w)
				}
			}
			expectDiags(t, res.Diags, c.diags)
			for _, d := range res.Diags {
				if strings.Contains(d.String(), wrong) || strings.Contains(d.String(), sp) || strings.Contains(d.String(), kp) {
					t.Errorf("diagnostic shows a password: %s", d)
				}
			}
			for _, k := range c.ignored {
				if _, ok := res.Ignored[k]; !ok {
					t.Errorf("%s not ignored", k)
				}
			}
		})
	}
}

func readCA(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := parsePEMCerts(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return encodeCerts(cs)
}

// TestTLSECKeys: EC keys in JKS (key password different from the store password) and PKCS12.
func TestTLSECKeys(t *testing.T) {
	clientconftest.RequireTool(t, "keytool")
	dir := t.TempDir()
	keytool(t, dir, "-genkeypair", "-alias", "ec", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=ec-client", "-validity", "30",
		"-keystore", "ec.jks", "-storetype", "JKS", "-storepass", "store-pw", "-keypass", "key-pw")
	keytool(t, dir, "-genkeypair", "-alias", "ec384", "-keyalg", "EC", "-groupname", "secp384r1", "-dname", "CN=ec384-client", "-validity", "30",
		"-keystore", "ec.p12", "-storetype", "PKCS12", "-storepass", "store-pw")
	keytool(t, dir, "-exportcert", "-rfc", "-alias", "ec", "-keystore", "ec.jks", "-storepass", "store-pw", "-file", "ec.pem")
	keytool(t, dir, "-exportcert", "-rfc", "-alias", "ec384", "-keystore", "ec.p12", "-storepass", "store-pw", "-file", "ec384.pem")
	for _, c := range []struct{ name, typ, file, keyPass, cn, ca string }{
		{"JKS", "JKS", "ec.jks", "key-pw", "ec-client", "ec.pem"},
		{"PKCS12", "PKCS12", "ec.p12", "", "ec384-client", "ec384.pem"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := []string{"ssl.keystore.type", c.typ, "ssl.keystore.location", filepath.Join(dir, c.file), "ssl.keystore.password", "store-pw",
				"ssl.truststore.type", "PEM", "ssl.truststore.location", filepath.Join(dir, c.ca)}
			if c.keyPass != "" {
				in = append(in, "ssl.key.password", c.keyPass)
			}
			r := Translate(tlsProps(in...), Producer, Options{})
			expectDiags(t, r.Diags, nil)
			checkMaterial(t, r, c.cn)
		})
	}
}

// TestTLSPEM: PEM key stores made with openssl: plain and encrypted PKCS#8, the traditional
// RSA format, legacy encrypted PEM, inline values and values joined onto one line.
func TestTLSPEM(t *testing.T) {
	clientconftest.RequireTool(t, "openssl")
	dir := t.TempDir()
	openssl(t, dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "30", "-subj", "/CN=pem-ca")
	openssl(t, dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=pem-client")
	openssl(t, dir, "x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "client.crt", "-days", "30")
	openssl(t, dir, "pkcs8", "-topk8", "-in", "client.key", "-out", "client-enc.key", "-v2", "aes-256-cbc", "-passout", "pass:pem-key-pw")
	openssl(t, dir, "pkcs8", "-topk8", "-in", "client.key", "-out", "client-enc3des.key", "-v2", "des3", "-v2prf", "hmacWithSHA1", "-passout", "pass:pem-key-pw")
	openssl(t, dir, "pkcs8", "-topk8", "-in", "client.key", "-out", "client-pbes1.key", "-v1", "PBE-SHA1-3DES", "-passout", "pass:pem-key-pw")
	openssl(t, dir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "rsa.key", "-out", "rsa.csr", "-subj", "/CN=rsa-client")
	openssl(t, dir, "x509", "-req", "-in", "rsa.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "rsa.crt", "-days", "30")
	openssl(t, dir, "rsa", "-in", "rsa.key", "-out", "rsa-trad.key", "-traditional")
	openssl(t, dir, "rsa", "-in", "rsa.key", "-out", "rsa-legacy-enc.key", "-traditional", "-aes256", "-passout", "pass:pem-key-pw")
	openssl(t, dir, "pkcs12", "-export", "-inkey", "client.key", "-in", "client.crt", "-certfile", "ca.crt", "-out", "openssl.p12", "-passout", "pass:p12-pw", "-name", "client")

	read := func(n string) string {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write := func(n, s string) string {
		f := filepath.Join(dir, n)
		if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	plainStore := write("plain-store.pem", read("client.key")+read("client.crt")+read("ca.crt"))
	encStore := write("enc-store.pem", read("client-enc.key")+read("client.crt"))
	enc3desStore := write("enc3des-store.pem", read("client-enc3des.key")+read("client.crt"))
	pbes1Store := write("pbes1-store.pem", read("client-pbes1.key")+read("client.crt"))
	tradStore := write("trad-store.pem", read("rsa-trad.key")+read("rsa.crt"))
	legacyStore := write("legacy-store.pem", read("rsa-legacy-enc.key")+read("rsa.crt"))
	mismatch := write("mismatch-store.pem", read("client.key")+read("rsa.crt"))
	caFile := filepath.Join(dir, "ca.crt")
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") } // as after "\" line continuations

	good := []struct {
		name string
		in   []string
		cn   string
		diag []string
	}{
		{"PEM file", []string{"ssl.keystore.type", "PEM", "ssl.keystore.location", plainStore}, "pem-client", nil},
		{"encrypted PEM file (AES)", []string{"ssl.keystore.type", "PEM", "ssl.keystore.location", encStore, "ssl.key.password", "pem-key-pw"}, "pem-client", nil},
		{"encrypted PEM file (3DES)", []string{"ssl.keystore.type", "PEM", "ssl.keystore.location", enc3desStore, "ssl.key.password", "pem-key-pw"}, "pem-client", nil},
		{"traditional RSA key", []string{"ssl.keystore.type", "PEM", "ssl.keystore.location", tradStore}, "rsa-client",
			[]string{"W:traditional RSA format; Java accepts only PKCS#8"}},
		{"inline", []string{"ssl.keystore.type", "PEM", "ssl.keystore.key", read("client-enc.key"), "ssl.keystore.certificate.chain", read("client.crt") + read("ca.crt"),
			"ssl.key.password", "pem-key-pw", "ssl.truststore.type", "PEM", "ssl.truststore.certificates", read("ca.crt")}, "pem-client", nil},
		{"inline on one line", []string{"ssl.keystore.type", "PEM", "ssl.keystore.key", oneLine(read("client.key")), "ssl.keystore.certificate.chain", oneLine(read("client.crt")),
			"ssl.truststore.type", "PEM", "ssl.truststore.certificates", oneLine(read("ca.crt"))}, "pem-client", nil},
		{"openssl PKCS12", []string{"ssl.keystore.type", "PKCS12", "ssl.keystore.location", filepath.Join(dir, "openssl.p12"), "ssl.keystore.password", "p12-pw"}, "pem-client", nil},
		{"unneeded key password", []string{"ssl.keystore.type", "PEM", "ssl.keystore.location", plainStore, "ssl.key.password", "x"}, "pem-client",
			[]string{"W:ssl.key.password: " + plainStore + ": the private key is not encrypted"}},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			if !strings.Contains(strings.Join(in, " "), "ssl.truststore") {
				in = append(in, "ssl.truststore.type", "PEM", "ssl.truststore.location", caFile)
			}
			r := Translate(tlsProps(in...), Consumer, Options{})
			expectDiags(t, r.Diags, c.diag)
			checkMaterial(t, r, c.cn)
		})
	}

	runCases(t, []tcase{
		{name: "encrypted without password", in: []string{"security.protocol", "SSL", "ssl.keystore.type", "PEM", "ssl.keystore.location", encStore},
			diags: []string{"E:ssl.keystore.location: " + encStore + ": the private key is encrypted but ssl.key.password is not set"}},
		{name: "encrypted wrong password", in: []string{"security.protocol", "SSL", "ssl.keystore.type", "PEM", "ssl.keystore.location", encStore, "ssl.key.password", "nope"},
			diags: []string{"E:ssl.key.password: cannot decrypt the private key in " + encStore + ": wrong ssl.key.password"}},
		{name: "PBES1", in: []string{"security.protocol", "SSL", "ssl.keystore.type", "PEM", "ssl.keystore.location", pbes1Store, "ssl.key.password", "pem-key-pw"},
			diags: []string{"E:unsupported key encryption"}},
		{name: "legacy encrypted PEM", in: []string{"security.protocol", "SSL", "ssl.keystore.type", "PEM", "ssl.keystore.location", legacyStore, "ssl.key.password", "pem-key-pw"},
			diags: []string{"E:legacy OpenSSL-encrypted PEM keys"}},
		{name: "mismatched cert and key", in: []string{"security.protocol", "SSL", "ssl.keystore.type", "PEM", "ssl.keystore.location", mismatch},
			diags: []string{"E:does not match the private key"}},
		{name: "PEM store with store password", in: []string{"security.protocol", "SSL", "ssl.keystore.type", "PEM", "ssl.keystore.location", plainStore, "ssl.keystore.password", "x"},
			want: map[string]string{"ssl.key.pem": "*"}, diags: []string{"W:ssl.keystore.password is set for a PEM key store; ignored"}},
		{name: "inline key without chain", in: []string{"security.protocol", "SSL", "ssl.keystore.type", "PEM", "ssl.keystore.key", read("client.key")},
			diags: []string{"E:must be set together"}},
		{name: "inline key with JKS type", in: []string{"security.protocol", "SSL", "ssl.keystore.key", read("client.key"), "ssl.keystore.certificate.chain", read("client.crt")},
			diags: []string{"E:inline PEM key material needs ssl.keystore.type=PEM"}},
		{name: "inline and location", in: []string{"security.protocol", "SSL", "ssl.truststore.type", "PEM", "ssl.truststore.certificates", read("ca.crt"), "ssl.truststore.location", caFile},
			diags: []string{"E:both ssl.truststore.location and ssl.truststore.certificates are set"}},
		{name: "garbage inline certs", in: []string{"security.protocol", "SSL", "ssl.truststore.type", "PEM", "ssl.truststore.certificates", "not a cert"},
			diags: []string{"E:ssl.truststore.certificates: no PEM certificates found"}},
		{name: "PEM truststore with password", in: []string{"security.protocol", "SSL", "ssl.truststore.type", "PEM", "ssl.truststore.location", caFile, "ssl.truststore.password", "x"},
			diags: []string{"W:ssl.truststore.password is set for a PEM trust store; ignored"}},
	})
}

func TestTLSOptions(t *testing.T) {
	runCases(t, []tcase{
		{name: "hostname verification off", in: []string{"security.protocol", "SSL", "ssl.endpoint.identification.algorithm", ""},
			want: map[string]string{"ssl.endpoint.identification.algorithm": "none"}},
		{name: "hostname verification https", in: []string{"security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plainMod + " required username=u password=p;", "ssl.endpoint.identification.algorithm", "HTTPS"},
			want: map[string]string{"ssl.endpoint.identification.algorithm": "https"}},
		{name: "hostname verification bogus", in: []string{"security.protocol", "SSL", "ssl.endpoint.identification.algorithm", "ldaps"}, diags: []string{"E:librdkafka knows https and none"}},
		{name: "no TLS, no endpoint setting", in: nil, want: map[string]string{"ssl.endpoint.identification.algorithm": absent}},
		{name: "ciphers", in: []string{"security.protocol", "SSL", "ssl.cipher.suites", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, SSL_RSA_WITH_AES_128_CBC_SHA,TLS_AES_128_GCM_SHA256, TLS_BOGUS"},
			want:  map[string]string{"ssl.cipher.suites": "ECDHE-RSA-AES256-GCM-SHA384:AES128-SHA"},
			diags: []string{"W:TLS 1.3 suites (TLS_AES_128_GCM_SHA256) cannot be restricted", "W:cipher suite(s) TLS_BOGUS are not known to OpenSSL"}},
		{name: "only TLS 1.3 ciphers", in: []string{"security.protocol", "SSL", "ssl.cipher.suites", "TLS_AES_256_GCM_SHA384"},
			want: map[string]string{"ssl.cipher.suites": absent}, diags: []string{"W:TLS 1.3 suites"}},
		{name: "protocols default", in: []string{"security.protocol", "SSL", "ssl.enabled.protocols", "TLSv1.2, TLSv1.3", "ssl.protocol", "TLSv1.3"}, ignored: []string{"ssl.enabled.protocols", "ssl.protocol"}},
		{name: "protocols pinned", in: []string{"security.protocol", "SSL", "ssl.enabled.protocols", "TLSv1.3", "ssl.protocol", "TLSv1.3"}, diags: []string{"W:cannot restrict the TLS versions it offers (TLSv1.3)"}},
		{name: "Java TLS knobs", in: []string{"security.protocol", "SSL", "ssl.keymanager.algorithm", "SunX509", "ssl.trustmanager.algorithm", "PKIX", "ssl.secure.random.implementation", "SHA1PRNG", "ssl.provider", "BCJSSE"},
			diags: []string{"W:ssl.secure.random.implementation: Java TLS provider", "W:ssl.provider: Java TLS provider"}, ignored: []string{"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm"}},
		{name: "engine factory", in: []string{"security.protocol", "SSL", "ssl.engine.factory.class", "com.acme.F"}, diags: []string{"E:ssl.engine.factory.class"}},
	})
}

// TestTLSHandshake proves the translated material works for mutual TLS with hostname
// verification: a Go TLS server with the keytool-made broker certificate requires a client
// certificate from the CA; the client uses only what Translate produced.
func TestTLSHandshake(t *testing.T) {
	p, sp, kp := pki(t)
	r := Translate(tlsProps(
		"ssl.truststore.location", p.TruststoreJKS, "ssl.truststore.password", sp,
		"ssl.keystore.location", p.KeystoreJKS, "ssl.keystore.password", sp, "ssl.key.password", kp,
	), Consumer, Options{})
	checkMaterial(t, r, p.ClientCN)

	serverPair, err := tls.LoadX509KeyPair(p.ServerCertPEM, p.ServerKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	caPool := x509.NewCertPool()
	caPool.AppendCertsFromPEM([]byte(readCA(t, p.CA)))
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{serverPair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: caPool})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			peer <- "accept: " + err.Error()
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		if err := tc.Handshake(); err != nil {
			peer <- "handshake: " + err.Error()
			return
		}
		peer <- tc.ConnectionState().PeerCertificates[0].Subject.CommonName
		_, _ = io.Copy(io.Discard, c)
	}()
	clientPair, err := tls.X509KeyPair([]byte(r.Config["ssl.certificate.pem"]), []byte(r.Config["ssl.key.pem"]))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(r.Config["ssl.ca.pem"]))
	conn, err := tls.DialWithDialer(&netDialer, "tcp", ln.Addr().String(), &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{clientPair}, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	defer conn.Close()
	if got := <-peer; got != p.ClientCN {
		t.Fatalf("server saw %q, want client CN %q", got, p.ClientCN)
	}
}

var netDialer = net.Dialer{Timeout: 10 * time.Second}

func TestMakeJKSOutputs(t *testing.T) {
	p, sp, kp := pki(t)
	if sp == kp {
		t.Fatal("store and key passwords must differ")
	}
	for _, f := range []string{p.CA, p.KeystoreJKS, p.TruststoreJKS, p.KeystoreP12, p.TruststoreP12, p.CertPEM, p.KeyPEM, p.ServerKeystoreJKS, p.ServerCertPEM, p.ServerKeyPEM} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	server, err := tls.LoadX509KeyPair(p.ServerCertPEM, p.ServerKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(server.Certificate[0])
	if len(leaf.IPAddresses) == 0 || leaf.IPAddresses[0].String() != "127.0.0.1" || leaf.NotAfter.Before(time.Now().Add(24*time.Hour)) {
		t.Errorf("server certificate: IPs %v, not after %v", leaf.IPAddresses, leaf.NotAfter)
	}
	if _, err := tls.LoadX509KeyPair(p.CertPEM, p.KeyPEM); err != nil {
		t.Errorf("client PEM pair: %v", err)
	}
	// The server key store also works through Translate (a broker-style JKS).
	r := Translate(tlsProps("ssl.keystore.location", p.ServerKeystoreJKS, "ssl.keystore.password", sp, "ssl.key.password", kp), Admin, Options{})
	checkMaterial(t, r, "localhost")
}
