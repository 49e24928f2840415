// Package clientconftest makes TLS material for tests: a CA, a broker (server) certificate
// and a client certificate, as Java key stores and trust stores (JKS and PKCS12) made with the
// JDK's keytool, and as PEM files.
//
// It is test support only: it calls t.Fatal/t.Skip, shells out to keytool, and must never be
// imported by non-test code. It does not import package clientconf (so clientconf's tests can
// use it) nor confluent-kafka-go.
package clientconftest

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// Paths are the files MakeJKS writes.
type Paths struct {
	CA            string // CA certificate, PEM
	KeystoreJKS   string // client key store, JKS: client key (password keyPass) + chain
	TruststoreJKS string // trust store with the CA, JKS (password storePass)
	KeystoreP12   string // client key store, PKCS12 (storePass for store and key, as keytool requires)
	TruststoreP12 string // trust store with the CA, PKCS12 (password storePass)
	CertPEM       string // client certificate chain (leaf, then CA), PEM
	KeyPEM        string // client private key, unencrypted PKCS#8 PEM

	ServerKeystoreJKS string // broker key store, JKS: server key (password keyPass) + chain
	ServerCertPEM     string // broker certificate chain, PEM
	ServerKeyPEM      string // broker private key, unencrypted PKCS#8 PEM

	ClientCN string // the client certificate's CN: the mTLS principal is "User:CN=<ClientCN>"
}

// RequireTool returns the path of an executable, or skips the test when it is missing, unless
// the environment says KMM_REQUIRE_TOOLS=1 (as CI does), in which case the test fails.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	if testing.Short() && os.Getenv("KMM_REQUIRE_TOOLS") != "1" {
		t.Skipf("-short (make unit): tests that need %s run in make test", name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("KMM_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s is required (KMM_REQUIRE_TOOLS=1) but not found in PATH", name)
		}
		t.Skipf("%s not found in PATH; skipping (set KMM_REQUIRE_TOOLS=1 to make this a failure)", name)
	}
	return p
}

// MakeJKS creates, in dir, a CA, a server certificate with CN cn and the given subject
// alternative names (default 127.0.0.1 and localhost; entries may be "ip:...", "dns:..." or a
// bare IP address or host name), and a client certificate with CN cn+"-client", all signed by
// the CA. Key stores use storePass for the store and keyPass for the private key (they differ,
// to exercise ssl.key.password), except PKCS12 key stores where keytool insists on storePass
// for both. A Kafka SSL listener on 127.0.0.1 can use:
//
//	ssl.keystore.type=JKS
//	ssl.keystore.location=<ServerKeystoreJKS>  ssl.keystore.password=<storePass>  ssl.key.password=<keyPass>
//	ssl.truststore.location=<TruststoreJKS>    ssl.truststore.password=<storePass>
//	ssl.client.auth=required
func MakeJKS(t testing.TB, dir, cn string, sans []string) (paths Paths, storePass, keyPass string) {
	t.Helper()
	keytool := RequireTool(t, "keytool")
	storePass, keyPass = "store-secret-1", "key-secret-2"
	if cn == "" {
		cn = "localhost"
	}
	if len(sans) == 0 {
		sans = []string{"ip:127.0.0.1", "dns:localhost"}
	}
	var san []string
	for _, s := range sans {
		l := strings.ToLower(s)
		switch {
		case strings.HasPrefix(l, "ip:"), strings.HasPrefix(l, "dns:"):
			san = append(san, s)
		case net.ParseIP(s) != nil:
			san = append(san, "ip:"+s)
		default:
			san = append(san, "dns:"+s)
		}
	}
	f := func(n string) string { return filepath.Join(dir, n) }
	paths = Paths{
		CA: f("ca.pem"), KeystoreJKS: f("client.jks"), TruststoreJKS: f("truststore.jks"),
		KeystoreP12: f("client.p12"), TruststoreP12: f("truststore.p12"),
		CertPEM: f("client-cert.pem"), KeyPEM: f("client-key.pem"),
		ServerKeystoreJKS: f("server.jks"), ServerCertPEM: f("server-cert.pem"), ServerKeyPEM: f("server-key.pem"),
		ClientCN: cn + "-client",
	}
	run := func(args ...string) error {
		// A quick JVM start: keytool runs for well under a second.
		jvm := []string{"-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Xshare:auto"}
		cmd := exec.Command(keytool, append(jvm, args...)...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("keytool %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return nil
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	caStore := f("ca.p12")
	must(run("-genkeypair", "-alias", "ca", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=kmm-test-ca",
		"-ext", "bc:c", "-validity", "3650", "-keystore", caStore, "-storetype", "PKCS12", "-storepass", storePass))
	must(run("-exportcert", "-rfc", "-alias", "ca", "-keystore", caStore, "-storepass", storePass, "-file", paths.CA))

	leaf := func(alias, dname, store string, ext []string) error {
		steps := [][]string{
			{"-genkeypair", "-alias", alias, "-keyalg", "RSA", "-keysize", "2048", "-dname", dname, "-validity", "3650",
				"-keystore", store, "-storetype", "JKS", "-storepass", storePass, "-keypass", keyPass},
			{"-certreq", "-alias", alias, "-keystore", store, "-storepass", storePass, "-keypass", keyPass, "-file", alias + ".csr"},
			append([]string{"-gencert", "-alias", "ca", "-keystore", caStore, "-storepass", storePass,
				"-infile", alias + ".csr", "-outfile", alias + ".crt", "-rfc", "-validity", "3650"}, ext...),
			{"-importcert", "-noprompt", "-alias", "ca", "-file", paths.CA, "-keystore", store, "-storepass", storePass},
			{"-importcert", "-alias", alias, "-file", alias + ".crt", "-keystore", store, "-storepass", storePass, "-keypass", keyPass},
		}
		for _, s := range steps {
			if err := run(s...); err != nil {
				return err
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	wg.Add(4)
	go func() {
		defer wg.Done()
		errs[0] = leaf("server", "CN="+cn, paths.ServerKeystoreJKS, []string{"-ext", "SAN=" + strings.Join(san, ",")})
	}()
	go func() {
		defer wg.Done()
		if errs[1] = leaf("client", "CN="+paths.ClientCN, paths.KeystoreJKS, nil); errs[1] != nil {
			return
		}
		errs[1] = run("-importkeystore", "-noprompt", "-srckeystore", paths.KeystoreJKS, "-srcstoretype", "JKS", "-srcstorepass", storePass,
			"-srcalias", "client", "-srckeypass", keyPass, "-destkeystore", paths.KeystoreP12, "-deststoretype", "PKCS12",
			"-deststorepass", storePass, "-destkeypass", storePass, "-destalias", "client")
	}()
	go func() {
		defer wg.Done()
		errs[2] = run("-importcert", "-noprompt", "-alias", "ca", "-file", paths.CA, "-keystore", paths.TruststoreJKS, "-storetype", "JKS", "-storepass", storePass)
	}()
	go func() {
		defer wg.Done()
		errs[3] = run("-importcert", "-noprompt", "-alias", "ca", "-file", paths.CA, "-keystore", paths.TruststoreP12, "-storetype", "PKCS12", "-storepass", storePass)
	}()
	wg.Wait()
	for _, err := range errs {
		must(err)
	}
	must(jksToPEM(paths.KeystoreJKS, "client", storePass, keyPass, paths.CertPEM, paths.KeyPEM))
	must(jksToPEM(paths.ServerKeystoreJKS, "server", storePass, keyPass, paths.ServerCertPEM, paths.ServerKeyPEM))
	// Sanity check: the PKCS12 key store decodes with the store password.
	if data, err := os.ReadFile(paths.KeystoreP12); err != nil {
		t.Fatal(err)
	} else if _, _, _, err := pkcs12.DecodeChain(data, storePass); err != nil {
		t.Fatalf("clientconftest: %s: %v", paths.KeystoreP12, err)
	}
	return paths, storePass, keyPass
}

// jksToPEM writes the chain and the (PKCS#8, unencrypted) key of a JKS entry as PEM.
func jksToPEM(store, alias, storePass, keyPass, certOut, keyOut string) error {
	data, err := os.ReadFile(store)
	if err != nil {
		return err
	}
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(storePass)); err != nil {
		return fmt.Errorf("%s: %v", store, err)
	}
	e, err := ks.GetPrivateKeyEntry(alias, []byte(keyPass))
	if err != nil {
		return fmt.Errorf("%s: %s: %v", store, alias, err)
	}
	if _, err := x509.ParsePKCS8PrivateKey(e.PrivateKey); err != nil {
		return fmt.Errorf("%s: %s: key: %v", store, alias, err)
	}
	var certs bytes.Buffer
	for _, c := range e.CertificateChain {
		if err := pem.Encode(&certs, &pem.Block{Type: "CERTIFICATE", Bytes: c.Content}); err != nil {
			return err
		}
	}
	if err := os.WriteFile(certOut, certs.Bytes(), 0o600); err != nil {
		return err
	}
	return os.WriteFile(keyOut, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: e.PrivateKey}), 0o600)
}
