package clientconf

import (
	"fmt"
	"strings"
)

// security decides the protocol and translates the TLS and SASL settings.
func (s *state) security() {
	s.proto = "PLAINTEXT"
	if p, ok := s.get("security.protocol"); ok {
		switch v := strings.ToUpper(p.Value); v {
		case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
			s.proto = v
			s.set("security.protocol", strings.ToLower(v), "security.protocol")
		default:
			s.errorf("security.protocol", "", "invalid value %s: expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", s.show("security.protocol", p.Value))
		}
	}
	s.useSSL = s.proto == "SSL" || s.proto == "SASL_SSL"
	s.useSASL = strings.HasPrefix(s.proto, "SASL_")
	if !s.has("security.protocol") {
		s.unusedGroupWarning("ssl.", "SSL")
		s.unusedGroupWarning("sasl.", "SASL_PLAINTEXT or SASL_SSL")
	}
	if s.useSASL {
		s.sasl()
	}
	if s.useSSL {
		s.tls()
	}
}

// unusedGroupWarning warns once when ssl.* or sasl.* settings are present although
// security.protocol is not set at all (so Java's PLAINTEXT applies and ignores them).
func (s *state) unusedGroupWarning(prefix, want string) {
	first := ""
	for _, k := range sortedKeys(s.props) {
		if strings.HasPrefix(k, prefix) && s.props[k].Pos != "default" {
			if _, known := settingByKey[k]; known {
				first = k
				break
			}
		}
	}
	if first == "" {
		return
	}
	s.warnf(first, "set security.protocol="+want+" for this cluster",
		"%s* settings are present but security.protocol is not set, so Java's default PLAINTEXT applies and they are ignored", prefix)
}

// --- TLS ---

func (s *state) tls() {
	s.truststore()
	s.keystore()

	// Hostname verification: Java's default is https (since Kafka 2.0), as is librdkafka's.
	if p, ok := s.get("ssl.endpoint.identification.algorithm"); ok {
		switch strings.ToLower(p.Value) {
		case "https":
			s.set("ssl.endpoint.identification.algorithm", "https", "ssl.endpoint.identification.algorithm")
		case "":
			s.set("ssl.endpoint.identification.algorithm", "none", "ssl.endpoint.identification.algorithm")
		default:
			s.errorf("ssl.endpoint.identification.algorithm", "use https, or an empty value to turn hostname verification off",
				"invalid value %s: librdkafka knows https and none", s.show("ssl.endpoint.identification.algorithm", p.Value))
		}
	} else {
		s.setDefault("ssl.endpoint.identification.algorithm", "https")
	}

	if p, ok := s.get("ssl.enabled.protocols"); ok {
		st := settingByKey["ssl.enabled.protocols"]
		if !st.isDefault(p.Value) && p.Pos != "default" {
			s.warnf("ssl.enabled.protocols", "librdkafka uses OpenSSL's range of versions (TLS 1.2 and 1.3 with the bundled OpenSSL 3)",
				"librdkafka 2.11 cannot restrict the TLS versions it offers (%s); ignored", strings.Join(splitList(p.Value), ", "))
		} else {
			s.ignore("ssl.enabled.protocols", "Java's default versions; librdkafka offers TLS 1.2 and 1.3 as well")
		}
	}
	if _, ok := s.get("ssl.cipher.suites"); ok {
		s.cipherSuites()
	}
}

func (s *state) truststore() {
	typ := strings.ToUpper(s.val("ssl.truststore.type"))
	_, passSet := s.get("ssl.truststore.password")
	inline, hasInline := s.get("ssl.truststore.certificates")
	loc, hasLoc := s.get("ssl.truststore.location")
	switch {
	case hasInline:
		if typ != "PEM" {
			s.errorf("ssl.truststore.certificates", "set ssl.truststore.type=PEM",
				"ssl.truststore.certificates needs ssl.truststore.type=PEM (it is %s)", orDefault(typ, "not set, Java's default JKS"))
			return
		}
		if hasLoc {
			s.errorf("ssl.truststore.certificates", "keep only one of them", "both ssl.truststore.location and ssl.truststore.certificates are set (Java refuses this too)")
			return
		}
		if passSet {
			s.warnf("ssl.truststore.password", "remove ssl.truststore.password", "a password is not used with PEM trust certificates (Java refuses this); ignored")
		}
		certs, err := parsePEMCerts(inline.Value)
		if err != nil {
			s.errorf("ssl.truststore.certificates", "", "%v", err)
			return
		}
		s.set("ssl.ca.pem", encodeCerts(certs), "ssl.truststore.certificates")
	case hasLoc:
		ref := storeRef{what: "trust store", locKey: "ssl.truststore.location", passKey: "ssl.truststore.password", typeKey: "ssl.truststore.type",
			path: loc.Value, typ: typ, pass: s.val("ssl.truststore.password"), passSet: passSet}
		certs, fs := loadTrustStore(s.read, ref)
		s.findings(fs)
		if certs != nil {
			s.set("ssl.ca.pem", encodeCerts(certs), s.present("ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password")...)
		}
	case passSet:
		s.errorf("ssl.truststore.password", "set ssl.truststore.location or remove the password", "ssl.truststore.password is set but ssl.truststore.location is not (Java refuses this too)")
	}
}

func (s *state) keystore() {
	typ := strings.ToUpper(s.val("ssl.keystore.type"))
	ko := keyOpts{passKey: "ssl.key.password", alias: s.val("ssl.keystore.alias")}
	if p, ok := s.get("ssl.key.password"); ok {
		ko.pass, ko.passSet = p.Value, true
	}
	_, passSet := s.get("ssl.keystore.password")
	key, hasKey := s.get("ssl.keystore.key")
	chain, hasChain := s.get("ssl.keystore.certificate.chain")
	loc, hasLoc := s.get("ssl.keystore.location")
	var kp *keyPair
	var origin []string
	switch {
	case hasKey || hasChain:
		k := "ssl.keystore.key"
		if !hasKey {
			k = "ssl.keystore.certificate.chain"
		}
		switch {
		case typ != "PEM":
			s.errorf(k, "set ssl.keystore.type=PEM", "inline PEM key material needs ssl.keystore.type=PEM (it is %s)", orDefault(typ, "not set, Java's default JKS"))
			return
		case !hasKey || !hasChain:
			s.errorf(k, "set both ssl.keystore.key and ssl.keystore.certificate.chain", "ssl.keystore.key and ssl.keystore.certificate.chain must be set together")
			return
		case hasLoc:
			s.errorf(k, "keep only one of them", "both ssl.keystore.location and inline PEM key material are set (Java refuses this too)")
			return
		}
		if passSet {
			s.warnf("ssl.keystore.password", "remove ssl.keystore.password", "a key store password is not used with inline PEM key material (Java refuses this; the key uses ssl.key.password); ignored")
		}
		var fs []finding
		kp, fs = pemKeyPair(key.Value, chain.Value, "ssl.keystore.key", "ssl.keystore.key", ko)
		s.findings(fs)
		origin = []string{"ssl.keystore.key", "ssl.keystore.certificate.chain"}
	case hasLoc:
		ref := storeRef{what: "key store", locKey: "ssl.keystore.location", passKey: "ssl.keystore.password", typeKey: "ssl.keystore.type",
			path: loc.Value, typ: typ, pass: s.val("ssl.keystore.password"), passSet: passSet}
		var fs []finding
		kp, fs = loadKeyStore(s.read, ref, ko)
		s.findings(fs)
		origin = s.present("ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.keystore.alias")
	case passSet:
		s.errorf("ssl.keystore.password", "set ssl.keystore.location or remove the password", "ssl.keystore.password is set but ssl.keystore.location is not (Java refuses this too)")
		return
	default:
		s.ignore("ssl.key.password", "no key store is configured")
		s.ignore("ssl.keystore.type", "no key store is configured")
		s.ignore("ssl.keystore.alias", "no key store is configured")
		return
	}
	if kp == nil {
		return
	}
	if ko.passSet {
		origin = append(origin, "ssl.key.password")
	}
	pemKey, err := encodeKey(kp.key)
	if err != nil {
		s.errorf(origin[0], "", "cannot encode the private key: %v", err)
		return
	}
	s.set("ssl.certificate.pem", encodeCerts(kp.chain), origin...)
	s.setSecret("ssl.key.pem", pemKey, origin...)
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// findings turns store findings into diagnostics.
func (s *state) findings(fs []finding) {
	for _, f := range fs {
		s.diag(f.sev, f.key, f.msg, f.hint)
	}
}

var tls13Suites = map[string]bool{
	"TLS_AES_128_GCM_SHA256": true, "TLS_AES_256_GCM_SHA384": true, "TLS_CHACHA20_POLY1305_SHA256": true,
	"TLS_AES_128_CCM_SHA256": true, "TLS_AES_128_CCM_8_SHA256": true,
}

func (s *state) cipherSuites() {
	const key = "ssl.cipher.suites"
	var out, tls13, unknown []string
	for _, n := range splitList(s.val(key)) {
		if n == "" {
			continue
		}
		iana := n
		if strings.HasPrefix(iana, "SSL_") { // Java's legacy aliases
			iana = "TLS_" + strings.TrimPrefix(iana, "SSL_")
		}
		switch {
		case tls13Suites[iana]:
			tls13 = append(tls13, n)
		case opensslCipherNames[iana] != "":
			out = append(out, opensslCipherNames[iana])
		case strings.Contains(n, "-") && !strings.HasPrefix(n, "TLS_"):
			out = append(out, n) // already an OpenSSL name
		default:
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		s.warnf(key, "use IANA names such as TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
			"cipher suite(s) %s are not known to OpenSSL; dropped", strings.Join(unknown, ", "))
	}
	if len(tls13) > 0 {
		s.warnf(key, "", "TLS 1.3 suites (%s) cannot be restricted through librdkafka; OpenSSL's TLS 1.3 defaults apply", strings.Join(tls13, ", "))
	}
	if len(out) == 0 {
		if len(tls13) == 0 {
			s.warnf(key, "", "no usable cipher suite left; OpenSSL's defaults apply")
		}
		return
	}
	s.set("ssl.cipher.suites", strings.Join(out, ":"), key)
}

// --- SASL ---

const (
	plainModule  = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule  = "org.apache.kafka.common.security.scram.ScramLoginModule"
	oauthModule  = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	krb5Module   = "com.sun.security.auth.module.Krb5LoginModule"
	oidcHandler  = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
	oidcHandler3 = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"
	unsecHandler = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"
)

const gssapiHint = "use a PLAIN, SCRAM-SHA-256/512 or OAUTHBEARER listener of the cluster, or keep Java MirrorMaker 2 for Kerberos-only clusters"

func (s *state) sasl() {
	mech := "GSSAPI"
	mp, mechSet := s.get("sasl.mechanism")
	if mechSet {
		mech = mp.Value
	}
	up := strings.ToUpper(mech)
	s.mech = up
	switch up {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER":
		if up != mech {
			s.warnf("sasl.mechanism", "write "+up, "Java matches SASL mechanism names case-sensitively and would not find %q; kmm uses %s", mech, up)
		}
		s.set("sasl.mechanisms", up, "sasl.mechanism")
	case "GSSAPI":
		key, pre := "sasl.mechanism", ""
		if !mechSet {
			key, pre = "security.protocol", "sasl.mechanism is not set, so Java's default GSSAPI applies: "
		}
		s.errorf(key, gssapiHint, "%sKerberos (GSSAPI) is not supported by this build of kmm (bundled librdkafka has no sasl_gssapi)", pre)
		return
	default:
		s.errorf("sasl.mechanism", "use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", "SASL mechanism %s is not supported", s.show("sasl.mechanism", mech))
		return
	}

	if up != "OAUTHBEARER" {
		if h := s.val("sasl.login.callback.handler.class"); h != "" {
			s.errorf("sasl.login.callback.handler.class", "remove it: PLAIN and SCRAM need only sasl.jaas.config",
				"custom Java login callback handlers cannot run in kmm")
		}
	}
	e, ok := s.jaas()
	if !ok {
		return
	}
	switch up {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		s.userPass(up, e)
	case "OAUTHBEARER":
		s.oauth(e)
	}
}

// jaas parses sasl.jaas.config, which must hold exactly one login module.
func (s *state) jaas() (JAASEntry, bool) {
	const key = "sasl.jaas.config"
	p, ok := s.get(key)
	if !ok {
		s.errorf("sasl.mechanism", "set sasl.jaas.config for this cluster, e.g. org.apache.kafka.common.security.plain.PlainLoginModule required username=\"...\" password=\"...\";",
			"sasl.jaas.config is not set (kmm does not read JVM JAAS files given with -Djava.security.auth.login.config)")
		return JAASEntry{}, false
	}
	entries, err := ParseJAAS(p.Value)
	if err != nil {
		s.errorf(key, "the format is: <LoginModule class> required name=\"value\" ...;", "malformed JAAS configuration: %v", err)
		return JAASEntry{}, false
	}
	if len(entries) != 1 {
		s.errorf(key, "keep one login module", "JAAS configuration contains %d login modules, should be 1 module (Java refuses this too)", len(entries))
		return JAASEntry{}, false
	}
	return entries[0], true
}

func moduleWants(module string) string {
	switch module {
	case plainModule:
		return "PLAIN"
	case scramModule:
		return "SCRAM-SHA-256 or SCRAM-SHA-512"
	case oauthModule:
		return "OAUTHBEARER"
	case krb5Module:
		return "GSSAPI"
	}
	return ""
}

func (s *state) userPass(mech string, e JAASEntry) {
	const key = "sasl.jaas.config"
	switch e.Module {
	case plainModule, scramModule:
		if (mech == "PLAIN") != (e.Module == plainModule) {
			s.warnf(key, fmt.Sprintf("use %s with sasl.mechanism=%s", map[bool]string{true: "PlainLoginModule", false: "ScramLoginModule"}[mech == "PLAIN"], mech),
				"login module %s is meant for %s, not %s; Java accepts this because both modules hand over username and password the same way, and so does kmm",
				shortClass(e.Module), moduleWants(e.Module), mech)
		}
	case oauthModule, krb5Module:
		s.errorf(key, "", "login module %s is for %s and cannot authenticate with sasl.mechanism=%s", shortClass(e.Module), moduleWants(e.Module), mech)
		return
	default:
		s.errorf(key, "use org.apache.kafka.common.security.plain.PlainLoginModule or org.apache.kafka.common.security.scram.ScramLoginModule",
			"login module %s cannot run in kmm (only Kafka's own login modules are understood)", safeModule(e.Module))
		return
	}
	user, okU := e.Options["username"]
	pass, okP := e.Options["password"]
	if !okU || !okP {
		var miss []string
		if !okU {
			miss = append(miss, "username")
		}
		if !okP {
			miss = append(miss, "password")
		}
		s.errorf(key, "", "%s has no %s option", shortClass(e.Module), strings.Join(miss, " or "))
		return
	}
	if user == "" || pass == "" {
		what := "password"
		if user == "" {
			what = "username"
		}
		// librdkafka refuses an empty SASL username or password when the client is created
		// ("sasl.username and sasl.password must be set"), so kmm cannot leave it to the broker
		// as MM2 does.
		s.errorf(key, "set the "+what+" the broker expects",
			"%s has an empty %s: librdkafka, the Kafka client kmm uses, cannot authenticate with an empty SASL %s (MM2 starts and fails at authentication)",
			shortClass(e.Module), what, what)
		return
	}
	if e.Module == scramModule && strings.EqualFold(e.Options["tokenauth"], "true") {
		s.errorf(key, "", "delegation token authentication (tokenauth=true) is not supported by librdkafka")
		return
	}
	var unknown []string
	for _, k := range sortedKeys(e.Options) {
		if k != "username" && k != "password" && !(e.Module == scramModule && k == "tokenauth") {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		s.warnf(key, "", "%s ignores option(s) %s", shortClass(e.Module), strings.Join(unknown, ", "))
	}
	s.set("sasl.username", user, key)
	s.setSecret("sasl.password", pass, key)
}

func shortClass(c string) string {
	if i := strings.LastIndexByte(c, '.'); i >= 0 && javaClassName.MatchString(c) {
		return c[i+1:]
	}
	return safeModule(c)
}

// oauthOnly are the settings used only by OAUTHBEARER; they are listed as ignored otherwise.
func (s *state) oauth(e JAASEntry) {
	const key = "sasl.jaas.config"
	if e.Module != oauthModule {
		if moduleWants(e.Module) != "" {
			s.errorf(key, "use org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule", "login module %s is for %s and cannot authenticate with sasl.mechanism=OAUTHBEARER", shortClass(e.Module), moduleWants(e.Module))
		} else {
			s.errorf(key, "use org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule", "login module %s cannot run in kmm (only Kafka's own login modules are understood)", safeModule(e.Module))
		}
		return
	}
	handler := normValue("CLASS", s.val("sasl.login.callback.handler.class"))
	endpoint := s.val("sasl.oauthbearer.token.endpoint.url")
	switch handler {
	case "", unsecHandler, oidcHandler, oidcHandler3:
	default:
		s.errorf("sasl.login.callback.handler.class", "use Kafka's org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler with sasl.oauthbearer.token.endpoint.url (OIDC client credentials)",
			"custom Java login callback handlers cannot run in kmm")
		return
	}
	oidc := handler == oidcHandler || handler == oidcHandler3
	if !oidc && endpoint != "" {
		s.warnf("sasl.oauthbearer.token.endpoint.url", "set sasl.login.callback.handler.class="+oidcHandler,
			"sasl.oauthbearer.token.endpoint.url is set but sasl.login.callback.handler.class is not OAuthBearerLoginCallbackHandler: Java would use unsecured JWTs and ignore the URL; kmm uses OIDC")
		oidc = true
	}
	if oidc {
		s.oidc(e)
		return
	}
	s.unsecuredJWT(e)
}

var assertionKeys = []struct{ java, rd string }{
	{"sasl.oauthbearer.assertion.algorithm", "sasl.oauthbearer.assertion.algorithm"},
	{"sasl.oauthbearer.assertion.claim.aud", "sasl.oauthbearer.assertion.claim.aud"},
	{"sasl.oauthbearer.assertion.claim.exp.seconds", "sasl.oauthbearer.assertion.claim.exp.seconds"},
	{"sasl.oauthbearer.assertion.claim.iss", "sasl.oauthbearer.assertion.claim.iss"},
	{"sasl.oauthbearer.assertion.claim.jti.include", "sasl.oauthbearer.assertion.claim.jti.include"},
	{"sasl.oauthbearer.assertion.claim.nbf.seconds", "sasl.oauthbearer.assertion.claim.nbf.seconds"},
	{"sasl.oauthbearer.assertion.claim.sub", "sasl.oauthbearer.assertion.claim.sub"},
	{"sasl.oauthbearer.assertion.file", "sasl.oauthbearer.assertion.file"},
	{"sasl.oauthbearer.assertion.private.key.file", "sasl.oauthbearer.assertion.private.key.file"},
	{"sasl.oauthbearer.assertion.private.key.passphrase", "sasl.oauthbearer.assertion.private.key.passphrase"},
	{"sasl.oauthbearer.assertion.template.file", "sasl.oauthbearer.assertion.jwt.template.file"},
}

const (
	retrieverDefault = "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever"
	retrieverCC      = "org.apache.kafka.common.security.oauthbearer.ClientCredentialsJwtRetriever"
	retrieverBearer  = "org.apache.kafka.common.security.oauthbearer.JwtBearerJwtRetriever"
	retrieverFile    = "org.apache.kafka.common.security.oauthbearer.FileJwtRetriever"
)

func (s *state) oidc(e JAASEntry) {
	const jkey = "sasl.jaas.config"
	endpoint := s.val("sasl.oauthbearer.token.endpoint.url")
	if endpoint == "" {
		s.errorf("sasl.login.callback.handler.class", "set sasl.oauthbearer.token.endpoint.url to the identity provider's token endpoint",
			"OAuthBearerLoginCallbackHandler needs sasl.oauthbearer.token.endpoint.url")
		return
	}
	if strings.HasPrefix(strings.ToLower(endpoint), "file:") {
		s.errorf("sasl.oauthbearer.token.endpoint.url", "use an http(s) token endpoint", "reading the token from a file (file: URL) is not supported by librdkafka")
		return
	}
	retriever := normValue("CLASS", s.val("sasl.oauthbearer.jwt.retriever.class"))
	bearer := false
	switch retriever {
	case "", retrieverDefault, retrieverCC:
	case retrieverBearer:
		bearer = true
	case retrieverFile:
		s.errorf("sasl.oauthbearer.jwt.retriever.class", "use an http(s) token endpoint", "reading the token from a file (FileJwtRetriever) is not supported by librdkafka")
		return
	default:
		s.errorf("sasl.oauthbearer.jwt.retriever.class", "", "custom Java JWT retrievers cannot run in kmm")
		return
	}
	s.set("sasl.oauthbearer.method", "oidc", "sasl.login.callback.handler.class")
	s.set("sasl.oauthbearer.token.endpoint.url", endpoint, "sasl.oauthbearer.token.endpoint.url")

	used := map[string]bool{}
	// Settings first, JAAS options as the fallback, as Java 4.1 does.
	pick := func(cfgKey, opt string) (string, string, bool) {
		if v, ok := s.get(cfgKey); ok && v.Value != "" {
			if _, both := e.Options[opt]; both {
				used[opt] = true
			}
			return v.Value, cfgKey, true
		}
		if v, ok := e.Options[opt]; ok {
			used[opt] = true
			return v, jkey, true
		}
		return "", "", false
	}
	if bearer {
		s.set("sasl.oauthbearer.grant.type", "urn:ietf:params:oauth:grant-type:jwt-bearer", "sasl.oauthbearer.jwt.retriever.class")
		n := 0
		for _, a := range assertionKeys {
			if v, ok := s.get(a.java); ok {
				if IsSecretKey(a.java) {
					s.setSecret(a.rd, v.Value, a.java)
				} else {
					s.set(a.rd, v.Value, a.java)
				}
				if a.java == "sasl.oauthbearer.assertion.file" || a.java == "sasl.oauthbearer.assertion.private.key.file" {
					n++
				}
			}
		}
		if n == 0 {
			s.errorf("sasl.oauthbearer.jwt.retriever.class", "set sasl.oauthbearer.assertion.private.key.file (or sasl.oauthbearer.assertion.file)",
				"JwtBearerJwtRetriever needs an assertion private key or assertion file")
		}
		if id, from, ok := pick("sasl.oauthbearer.client.credentials.client.id", "clientId"); ok {
			s.set("sasl.oauthbearer.client.id", id, from)
		}
	} else {
		for _, a := range assertionKeys {
			s.ignore(a.java, "only used with JwtBearerJwtRetriever")
		}
		id, fromID, okID := pick("sasl.oauthbearer.client.credentials.client.id", "clientId")
		sec, fromSec, okSec := pick("sasl.oauthbearer.client.credentials.client.secret", "clientSecret")
		if !okID || !okSec {
			var miss []string
			if !okID {
				miss = append(miss, "a client id (JAAS option clientId or sasl.oauthbearer.client.credentials.client.id)")
			}
			if !okSec {
				miss = append(miss, "a client secret (JAAS option clientSecret or sasl.oauthbearer.client.credentials.client.secret)")
			}
			s.errorf(jkey, "", "OIDC client credentials need %s", strings.Join(miss, " and "))
			return
		}
		s.set("sasl.oauthbearer.client.id", id, fromID)
		s.setSecret("sasl.oauthbearer.client.secret", sec, fromSec)
	}
	if sc, from, ok := pick("sasl.oauthbearer.scope", "scope"); ok && sc != "" {
		s.set("sasl.oauthbearer.scope", sc, from)
	}
	s.oauthExtensions(e, "extension_", used)
	s.jaasHTTPSTrust(e, used)
	var unknown []string
	for _, k := range sortedKeys(e.Options) {
		if !used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		s.warnf(jkey, "", "OAuthBearerLoginModule option(s) %s are not used with OIDC; ignored", strings.Join(unknown, ", "))
	}
}

// oauthExtensions turns JAAS extension options into sasl.oauthbearer.extensions.
func (s *state) oauthExtensions(e JAASEntry, prefix string, used map[string]bool) {
	var ext []string
	for _, k := range sortedKeys(e.Options) {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		used[k] = true
		name, v := strings.TrimPrefix(k, prefix), e.Options[k]
		if strings.ContainsAny(name+v, ",=") {
			s.errorf("sasl.jaas.config", "", "SASL extension %q: librdkafka cannot pass a name or value containing ',' or '='", name)
			return
		}
		ext = append(ext, name+"="+v)
	}
	if len(ext) > 0 {
		s.set("sasl.oauthbearer.extensions", strings.Join(ext, ","), "sasl.jaas.config")
	}
}

// jaasHTTPSTrust handles ssl.truststore.* options inside the OAuthBearerLoginModule entry,
// which Java uses to verify the token endpoint.
func (s *state) jaasHTTPSTrust(e JAASEntry, used map[string]bool) {
	const jkey = "sasl.jaas.config"
	loc, hasLoc := e.Options["ssl.truststore.location"]
	certs, hasCerts := e.Options["ssl.truststore.certificates"]
	if !hasLoc && !hasCerts {
		return
	}
	for k := range e.Options {
		if strings.HasPrefix(k, "ssl.truststore.") {
			used[k] = true
		}
	}
	if hasCerts {
		cs, err := parsePEMCerts(certs)
		if err != nil {
			s.errorf(jkey, "", "JAAS option ssl.truststore.certificates: %v", err)
			return
		}
		s.set("https.ca.pem", encodeCerts(cs), jkey)
		return
	}
	pass, passSet := e.Options["ssl.truststore.password"]
	ref := storeRef{what: "token endpoint trust store", locKey: jkey, passKey: jkey, typeKey: jkey,
		path: loc, typ: strings.ToUpper(e.Options["ssl.truststore.type"]), pass: pass, passSet: passSet}
	cs, fs := loadTrustStore(s.read, ref)
	s.findings(fs)
	if cs != nil {
		s.set("https.ca.pem", encodeCerts(cs), jkey)
	}
}

// unsecuredJWT translates OAuthBearerUnsecuredLoginCallbackHandler's options into
// librdkafka's unsecured JWT configuration.
func (s *state) unsecuredJWT(e JAASEntry) {
	const jkey = "sasl.jaas.config"
	o := e.Options
	used := map[string]bool{}
	get := func(k, def string) string {
		if v, ok := o[k]; ok {
			used[k] = true
			return v
		}
		return def
	}
	pclaim := get("unsecuredLoginPrincipalClaimName", "sub")
	sclaim := get("unsecuredLoginScopeClaimName", "scope")
	life := get("unsecuredLoginLifetimeSeconds", "3600")
	principal, ok := o["unsecuredLoginStringClaim_"+pclaim]
	if !ok {
		s.errorf(jkey, fmt.Sprintf("add unsecuredLoginStringClaim_%s=\"<principal>\" to the JAAS options", pclaim),
			"unsecured OAUTHBEARER (no token endpoint) needs the principal claim unsecuredLoginStringClaim_%s", pclaim)
		return
	}
	used["unsecuredLoginStringClaim_"+pclaim] = true
	var scope []string
	if v, ok := o["unsecuredLoginListClaim_"+sclaim]; ok && v != "" {
		used["unsecuredLoginListClaim_"+sclaim] = true
		delim := v[:1] // Java: the first character is the delimiter
		for _, x := range strings.Split(v[1:], delim) {
			if x != "" {
				scope = append(scope, x)
			}
		}
	} else if v, ok := o["unsecuredLoginStringClaim_"+sclaim]; ok {
		used["unsecuredLoginStringClaim_"+sclaim] = true
		scope = strings.Fields(v)
	}
	cfg := []string{"principalClaimName=" + pclaim, "principal=" + principal}
	if sclaim != "scope" {
		cfg = append(cfg, "scopeClaimName="+sclaim)
	}
	if len(scope) > 0 {
		cfg = append(cfg, "scope="+strings.Join(scope, ","))
	}
	cfg = append(cfg, "lifeSeconds="+life)
	for _, k := range sortedKeys(o) {
		if strings.HasPrefix(k, "unsecuredLoginExtension_") {
			used[k] = true
			cfg = append(cfg, "extension_"+strings.TrimPrefix(k, "unsecuredLoginExtension_")+"="+o[k])
		}
	}
	for _, c := range cfg {
		if strings.ContainsAny(c, " \t\n") {
			name, _, _ := strings.Cut(c, "=")
			s.errorf(jkey, "", "unsecured JWT setting %s contains blanks, which librdkafka's unsecured JWT configuration cannot carry", name)
			return
		}
	}
	var unknown []string
	for _, k := range sortedKeys(o) {
		if !used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		s.warnf(jkey, "", "unsecured JWT option(s) %s cannot be expressed in librdkafka's unsecured JWT configuration; ignored", strings.Join(unknown, ", "))
	}
	s.warnf("sasl.mechanism", "set sasl.login.callback.handler.class="+oidcHandler+" and sasl.oauthbearer.token.endpoint.url for real tokens",
		"OAUTHBEARER without a token endpoint uses unsecured JWTs (for testing only); kmm enables librdkafka's enable.sasl.oauthbearer.unsecure.jwt")
	s.set("enable.sasl.oauthbearer.unsecure.jwt", "true", jkey)
	s.set("sasl.oauthbearer.config", strings.Join(cfg, " "), jkey)
}
