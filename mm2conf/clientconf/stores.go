package clientconf

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	iofs "io/fs"
	"regexp"
	"sort"
	"strings"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// finding is a diagnostic produced while reading a store, before it is tied to a position.
type finding struct {
	sev  Severity
	key  string
	msg  string
	hint string
}

// storeRef names a key store or trust store and the settings that describe it.
type storeRef struct {
	what    string // "key store" or "trust store"
	locKey  string // Java key holding the path
	passKey string // Java key holding the password
	typeKey string // Java key holding the type
	path    string
	typ     string // declared type, upper case; "" when not set (Java default JKS)
	pass    string
	passSet bool
}

type storeFormat int

const (
	fmtUnknown storeFormat = iota
	fmtJKS
	fmtJCEKS
	fmtPKCS12
	fmtPEM
)

func (f storeFormat) String() string {
	return [...]string{"unknown", "JKS", "JCEKS", "PKCS12", "PEM"}[f]
}

func sniffStore(data []byte) storeFormat {
	switch {
	case bytes.HasPrefix(data, []byte{0xFE, 0xED, 0xFE, 0xED}):
		return fmtJKS
	case bytes.HasPrefix(data, []byte{0xCE, 0xCE, 0xCE, 0xCE}):
		return fmtJCEKS
	case bytes.Contains(data, []byte("-----BEGIN")):
		return fmtPEM
	case len(data) > 2 && data[0] == 0x30:
		return fmtPKCS12
	}
	return fmtUnknown
}

// resolveFormat reads the store file and decides its format from the declared type and the
// content, as Java does (Java 9+ reads JKS and PKCS12 files whichever of the two is declared).
func resolveFormat(read func(string) ([]byte, error), ref storeRef) ([]byte, storeFormat, []finding) {
	var fs []finding
	declared := ref.typ
	if declared == "" {
		declared = "JKS"
	}
	switch declared {
	case "JKS", "PKCS12", "PEM":
	case "JCEKS":
		return nil, fmtUnknown, []finding{{Error, ref.typeKey, fmt.Sprintf("%s type JCEKS is not supported by kmm", ref.what),
			"convert it: keytool -importkeystore -srckeystore <file> -srcstoretype JCEKS -destkeystore <new.p12> -deststoretype PKCS12"}}
	default:
		return nil, fmtUnknown, []finding{{Error, ref.typeKey, fmt.Sprintf("%s type %q is not supported (kmm reads JKS, PKCS12 and PEM)", ref.what, ref.typ), ""}}
	}
	data, err := read(ref.path)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return nil, fmtUnknown, []finding{{Error, ref.locKey, fmt.Sprintf("%s file %s does not exist", ref.what, ref.path), "check " + ref.locKey}}
		}
		return nil, fmtUnknown, []finding{{Error, ref.locKey, fmt.Sprintf("cannot read %s file %s: %v", ref.what, ref.path, unwrapPathErr(err)), ""}}
	}
	got := sniffStore(data)
	switch {
	case got == fmtJCEKS:
		return nil, fmtUnknown, []finding{{Error, ref.locKey, fmt.Sprintf("%s %s is a JCEKS store, which kmm does not read", ref.what, ref.path),
			"convert it: keytool -importkeystore -srckeystore <file> -srcstoretype JCEKS -destkeystore <new.p12> -deststoretype PKCS12"}}
	case got == fmtUnknown:
		return nil, fmtUnknown, []finding{{Error, ref.locKey, fmt.Sprintf("%s %s is not a JKS, PKCS12 or PEM file", ref.what, ref.path), ""}}
	case declared == "PEM" && got != fmtPEM:
		return nil, fmtUnknown, []finding{{Error, ref.typeKey, fmt.Sprintf("%s=PEM but %s is a %s store (Java would fail too)", ref.typeKey, ref.path, got), fmt.Sprintf("set %s=%s", ref.typeKey, got)}}
	case declared != "PEM" && got == fmtPEM:
		return nil, fmtUnknown, []finding{{Error, ref.typeKey, fmt.Sprintf("%s is %s but %s is a PEM file (Java would fail too)", ref.typeKey, declared, ref.path), "set " + ref.typeKey + "=PEM"}}
	case declared != got.String():
		how := "declares"
		if ref.typ == "" {
			how = "is not set, so Java's default"
		}
		fs = append(fs, finding{Warning, ref.typeKey, fmt.Sprintf("%s %s %s but %s is a %s file; reading it as %s, as Java 9+ does", ref.typeKey, how, declared, ref.path, got, got),
			fmt.Sprintf("set %s=%s", ref.typeKey, got)})
	}
	return data, got, fs
}

func unwrapPathErr(err error) error {
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func wrongPassword(ref storeRef) finding {
	if !ref.passSet {
		return finding{Error, ref.locKey, fmt.Sprintf("%s %s needs a password: %s is not set", ref.what, ref.path, ref.passKey), "set " + ref.passKey}
	}
	return finding{Error, ref.passKey, fmt.Sprintf("wrong password for %s %s (%s)", ref.what, ref.path, ref.passKey), "check " + ref.passKey}
}

// loadTrustStore returns the trusted certificates of a trust store file.
func loadTrustStore(read func(string) ([]byte, error), ref storeRef) ([]*x509.Certificate, []finding) {
	data, f, fs := resolveFormat(read, ref)
	if data == nil {
		return nil, fs
	}
	var certs []*x509.Certificate
	switch f {
	case fmtPEM:
		if ref.passSet {
			fs = append(fs, finding{Warning, ref.passKey, fmt.Sprintf("%s is set for a PEM trust store; ignored (Java refuses this combination)", ref.passKey), "remove " + ref.passKey})
		}
		var err error
		certs, err = parsePEMCerts(string(data))
		if err != nil {
			return nil, append(fs, finding{Error, ref.locKey, fmt.Sprintf("trust store %s: %v", ref.path, err), ""})
		}
	case fmtJKS:
		ks := keystore.New()
		err := ks.Load(bytes.NewReader(data), []byte(ref.pass))
		if err != nil && !(isBadDigest(err) && !ref.passSet) {
			// Without a password Java skips the integrity check; keystore-go reads all entries
			// before checking the digest, so a digest error then is not an error.
			if isBadDigest(err) {
				return nil, append(fs, wrongPassword(ref))
			}
			return nil, append(fs, finding{Error, ref.locKey, fmt.Sprintf("cannot read JKS trust store %s: %v", ref.path, err), ""})
		}
		for _, a := range ks.Aliases() {
			var der []byte
			if ks.IsTrustedCertificateEntry(a) {
				e, err := ks.GetTrustedCertificateEntry(a)
				if err == nil {
					der = e.Certificate.Content
				}
			} else if ks.IsPrivateKeyEntry(a) {
				// Java trusts the end-entity certificate of key entries too.
				chain, err := ks.GetPrivateKeyEntryCertificateChain(a)
				if err == nil && len(chain) > 0 {
					der = chain[0].Content
				}
			}
			if der == nil {
				continue
			}
			c, err := x509.ParseCertificate(der)
			if err != nil {
				fs = append(fs, finding{Warning, ref.locKey, fmt.Sprintf("trust store %s: entry %q is not a readable X.509 certificate; skipped", ref.path, a), ""})
				continue
			}
			certs = append(certs, c)
		}
	case fmtPKCS12:
		var err error
		certs, err = pkcs12.DecodeTrustStore(data, ref.pass)
		if err != nil {
			if errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption) {
				return nil, append(fs, wrongPassword(ref))
			}
			return nil, append(fs, finding{Error, ref.locKey, fmt.Sprintf("cannot read PKCS12 trust store %s: %v", ref.path, err),
				"a PKCS12 trust store must hold only trusted certificate entries; build one with keytool -importcert -storetype PKCS12"})
		}
	}
	if len(certs) == 0 {
		return nil, append(fs, finding{Error, ref.locKey, fmt.Sprintf("trust store %s holds no trusted certificates", ref.path), ""})
	}
	return certs, fs
}

func isBadDigest(err error) bool {
	return err != nil && strings.Contains(err.Error(), "invalid digest")
}

// keyPair is a client certificate chain (leaf first) and its private key.
type keyPair struct {
	chain []*x509.Certificate
	key   crypto.PrivateKey
	where string // for messages: the file, or the inline setting
}

// keyOpts are the key password and alias for loadKeyStore.
type keyOpts struct {
	pass    string
	passSet bool
	passKey string // "ssl.key.password"
	alias   string
}

// loadKeyStore returns the client certificate and key of a key store file.
func loadKeyStore(read func(string) ([]byte, error), ref storeRef, ko keyOpts) (*keyPair, []finding) {
	data, f, fs := resolveFormat(read, ref)
	if data == nil {
		return nil, fs
	}
	kp := &keyPair{where: ref.path}
	switch f {
	case fmtPEM:
		if ref.passSet {
			fs = append(fs, finding{Warning, ref.passKey, fmt.Sprintf("%s is set for a PEM key store; ignored (Java refuses it; PEM keys use %s)", ref.passKey, ko.passKey), "remove " + ref.passKey})
		}
		p, more := pemKeyPair(string(data), string(data), ref.path, ref.locKey, ko)
		return p, append(fs, more...)
	case fmtJKS:
		if !ref.passSet {
			return nil, append(fs, wrongPassword(ref))
		}
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(data), []byte(ref.pass)); err != nil {
			if isBadDigest(err) {
				return nil, append(fs, wrongPassword(ref))
			}
			return nil, append(fs, finding{Error, ref.locKey, fmt.Sprintf("cannot read JKS key store %s: %v", ref.path, err), ""})
		}
		var keyAliases []string
		for _, a := range ks.Aliases() {
			if ks.IsPrivateKeyEntry(a) {
				keyAliases = append(keyAliases, a)
			}
		}
		sort.Strings(keyAliases)
		if len(keyAliases) == 0 {
			return nil, append(fs, finding{Error, ref.locKey, fmt.Sprintf("key store %s holds no private key entry", ref.path), ""})
		}
		alias := keyAliases[0]
		if ko.alias != "" {
			alias = strings.ToLower(ko.alias)
			if !ks.IsPrivateKeyEntry(alias) {
				return nil, append(fs, finding{Error, "ssl.keystore.alias", fmt.Sprintf("key store %s has no private key entry %q (it has %s)", ref.path, ko.alias, strings.Join(keyAliases, ", ")), ""})
			}
		} else if len(keyAliases) > 1 {
			fs = append(fs, finding{Warning, ref.locKey, fmt.Sprintf("key store %s holds %d private keys (%s); using %q (Java picks one per connection)", ref.path, len(keyAliases), strings.Join(keyAliases, ", "), alias),
				"keep one private key entry in the client key store"})
		}
		pw, pwKey := ref.pass, ref.passKey
		if ko.passSet {
			pw, pwKey = ko.pass, ko.passKey
		}
		e, err := ks.GetPrivateKeyEntry(alias, []byte(pw))
		if err != nil {
			msg := fmt.Sprintf("cannot decrypt private key %q in %s: wrong %s", alias, ref.path, pwKey)
			hint := "check " + pwKey
			if !ko.passSet {
				msg += " (used because " + ko.passKey + " is not set)"
				hint = "set " + ko.passKey + " to the key's password"
			}
			key := pwKey
			if !ko.passSet {
				key = ref.locKey
			}
			return nil, append(fs, finding{Error, key, msg, hint})
		}
		k, err := parsePrivateKeyDER(e.PrivateKey)
		if err != nil {
			return nil, append(fs, finding{Error, ref.locKey, fmt.Sprintf("private key %q in %s: %v", alias, ref.path, err), ""})
		}
		kp.key = k
		for _, c := range e.CertificateChain {
			cert, err := x509.ParseCertificate(c.Content)
			if err != nil {
				return nil, append(fs, finding{Error, ref.locKey, fmt.Sprintf("certificate chain of %q in %s: %v", alias, ref.path, err), ""})
			}
			kp.chain = append(kp.chain, cert)
		}
	case fmtPKCS12:
		if !ref.passSet {
			return nil, append(fs, wrongPassword(ref))
		}
		key, leaf, cas, err := pkcs12.DecodeChain(data, ref.pass)
		if err != nil && ko.passSet && ko.pass != ref.pass && (errors.Is(err, pkcs12.ErrDecryption) || errors.Is(err, pkcs12.ErrIncorrectPassword)) {
			fs = append(fs, finding{Warning, ko.passKey, fmt.Sprintf("PKCS12 key store %s: kmm opens PKCS12 files with %s only (keytool uses one password for store and key)", ref.path, ref.passKey), ""})
		}
		if err != nil {
			if errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption) {
				return nil, append(fs, wrongPassword(ref))
			}
			return nil, append(fs, finding{Error, ref.locKey, fmt.Sprintf("cannot read PKCS12 key store %s: %v", ref.path, err), ""})
		}
		kp.key = key
		kp.chain = orderChain(key, append([]*x509.Certificate{leaf}, cas...))
	}
	return kp, append(fs, checkPair(kp, ref.locKey)...)
}

// orderChain puts the certificate matching key first, followed by its issuers found in certs.
func orderChain(key crypto.PrivateKey, certs []*x509.Certificate) []*x509.Certificate {
	var leaf *x509.Certificate
	for _, c := range certs {
		if pubMatches(c, key) {
			leaf = c
			break
		}
	}
	if leaf == nil {
		return certs
	}
	out := []*x509.Certificate{leaf}
	used := map[*x509.Certificate]bool{leaf: true}
	for cur := leaf; ; {
		var next *x509.Certificate
		for _, c := range certs {
			if !used[c] && bytes.Equal(c.RawSubject, cur.RawIssuer) && !bytes.Equal(cur.RawSubject, cur.RawIssuer) {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		out = append(out, next)
		used[next] = true
		cur = next
	}
	for _, c := range certs { // keep the rest, as Java sends the stored chain
		if !used[c] {
			out = append(out, c)
		}
	}
	return out
}

func pubMatches(c *x509.Certificate, key crypto.PrivateKey) bool {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return false
	}
	pub, ok := c.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(signer.Public())
}

// checkPair verifies that the first certificate belongs to the key.
func checkPair(kp *keyPair, key string) []finding {
	if len(kp.chain) == 0 {
		return []finding{{Error, key, fmt.Sprintf("%s: no certificate for the private key", kp.where), ""}}
	}
	if !pubMatches(kp.chain[0], kp.key) {
		return []finding{{Error, key, fmt.Sprintf("%s: the certificate %q does not match the private key", kp.where, kp.chain[0].Subject.String()), ""}}
	}
	var fs []finding
	if now := time.Now(); now.After(kp.chain[0].NotAfter) {
		fs = append(fs, finding{Warning, key, fmt.Sprintf("%s: the client certificate %q expired on %s", kp.where, kp.chain[0].Subject.String(), kp.chain[0].NotAfter.UTC().Format(time.DateOnly)), ""})
	}
	return fs
}

// parsePrivateKeyDER parses a PKCS#8 private key.
func parsePrivateKeyDER(der []byte) (crypto.PrivateKey, error) {
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		if strings.Contains(err.Error(), "1.2.840.10040.4.1") || strings.Contains(err.Error(), "DSA") {
			return nil, errors.New("DSA keys are not supported by kmm")
		}
		return nil, fmt.Errorf("not a readable PKCS#8 private key: %v", err)
	}
	switch k.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("unsupported private key type %T", k)
}

// --- PEM, read the way Java's DefaultSslEngineFactory.PemParser does ---

var (
	pemCertRe = regexp.MustCompile(`-+BEGIN\s*.*CERTIFICATE[^-]*-+\s+(?:\s*[^\r\n]*:[^\r\n]*[\r\n]+)*([a-zA-Z0-9/+=\s]*)-+END\s*.*CERTIFICATE[^-]*-+\s+`)
	pemKeyRe  = regexp.MustCompile(`-+BEGIN\s*(.*)PRIVATE\s+KEY[^-]*-+\s+(?:\s*[^\r\n]*:[^\r\n]*[\r\n]+)*([a-zA-Z0-9/+=\s]*)-+END\s*.*PRIVATE\s+KEY[^-]*-+\s+`)
	blanks    = regexp.MustCompile(`\s`)
)

func pemB64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(blanks.ReplaceAllString(s, ""))
}

// parsePEMCerts returns every certificate in text. It accepts what Java accepts: blocks may
// be run together on one line (as after a properties-file line continuation).
func parsePEMCerts(text string) ([]*x509.Certificate, error) {
	ms := pemCertRe.FindAllStringSubmatch(text+"\n", -1)
	if len(ms) == 0 {
		return nil, errors.New("no PEM certificates found")
	}
	var out []*x509.Certificate
	for i, m := range ms {
		der, err := pemB64(m[1])
		if err != nil {
			return nil, fmt.Errorf("certificate %d: bad base64", i+1)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %v", i+1, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// pemKeyPair reads a PEM private key (keyText) and certificate chain (chainText).
// where names the source in messages; locKey is the Java key diagnostics attach to.
func pemKeyPair(keyText, chainText, where, locKey string, ko keyOpts) (*keyPair, []finding) {
	var fs []finding
	ms := pemKeyRe.FindAllStringSubmatch(keyText+"\n", -1)
	switch {
	case len(ms) == 0:
		return nil, []finding{{Error, locKey, fmt.Sprintf("%s: no PEM private key found", where), ""}}
	case len(ms) > 1:
		return nil, []finding{{Error, locKey, fmt.Sprintf("%s: expected one private key, found %d", where, len(ms)), ""}}
	}
	label := strings.ToUpper(strings.TrimSpace(ms[0][1]))
	if strings.Contains(ms[0][0], "Proc-Type:") || strings.Contains(ms[0][0], "DEK-Info:") {
		return nil, []finding{{Error, locKey, fmt.Sprintf("%s: legacy OpenSSL-encrypted PEM keys (Proc-Type/DEK-Info) are not supported (Java rejects them too)", where), pkcs8ReencHint}}
	}
	der, err := pemB64(ms[0][2])
	if err != nil {
		return nil, []finding{{Error, locKey, fmt.Sprintf("%s: private key: bad base64", where), ""}}
	}
	var key crypto.PrivateKey
	switch label {
	case "ENCRYPTED":
		if !ko.passSet {
			return nil, []finding{{Error, locKey, fmt.Sprintf("%s: the private key is encrypted but %s is not set", where, ko.passKey), "set " + ko.passKey}}
		}
		plain, err := decryptPKCS8(der, ko.pass)
		if err == nil {
			key, err = parsePrivateKeyDER(plain)
			if err != nil && !strings.Contains(err.Error(), "not supported") && !strings.Contains(err.Error(), "unsupported") {
				err = errWrongPassword
			}
		}
		if errors.Is(err, errWrongPassword) {
			return nil, []finding{{Error, ko.passKey, fmt.Sprintf("cannot decrypt the private key in %s: wrong %s", where, ko.passKey), "check " + ko.passKey}}
		}
		if err != nil {
			return nil, []finding{{Error, locKey, fmt.Sprintf("%s: encrypted private key: %v", where, err), pkcs8ReencHint}}
		}
	case "":
		if ko.passSet {
			fs = append(fs, finding{Warning, ko.passKey, fmt.Sprintf("%s: the private key is not encrypted; %s is not needed (Java would refuse this)", where, ko.passKey), "remove " + ko.passKey})
		}
		key, err = parsePrivateKeyDER(der)
		if err != nil {
			return nil, []finding{{Error, locKey, fmt.Sprintf("%s: %v", where, err), ""}}
		}
	case "RSA", "EC":
		fs = append(fs, finding{Warning, locKey, fmt.Sprintf("%s: the private key is in the traditional %s format; Java accepts only PKCS#8 (BEGIN PRIVATE KEY)", where, label),
			"convert it: openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-pkcs8.pem"})
		var k any
		if label == "RSA" {
			k, err = x509.ParsePKCS1PrivateKey(der)
		} else {
			k, err = x509.ParseECPrivateKey(der)
		}
		if err != nil {
			return nil, append(fs, finding{Error, locKey, fmt.Sprintf("%s: unreadable %s private key", where, label), ""})
		}
		key = k
	default:
		return nil, []finding{{Error, locKey, fmt.Sprintf("%s: unsupported private key type %q", where, label+" PRIVATE KEY"), ""}}
	}
	certs, err := parsePEMCerts(chainText)
	if err != nil {
		return nil, append(fs, finding{Error, locKey, fmt.Sprintf("%s: certificate chain: %v", where, err), ""})
	}
	kp := &keyPair{chain: orderChain(key, certs), key: key, where: where}
	return kp, append(fs, checkPair(kp, locKey)...)
}

// encodeCerts renders certificates as concatenated PEM blocks.
func encodeCerts(certs []*x509.Certificate) string {
	var b strings.Builder
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.String()
}

// encodeKey renders a private key as unencrypted PKCS#8 PEM.
func encodeKey(k crypto.PrivateKey) (string, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}
