package clientconf

import "strings"

const hidden = "[hidden]"

// secretKeys are Java keys that hold secrets although their names do not say so: Java types
// them PASSWORD (and prints "[hidden]" for them).
var secretKeys = map[string]bool{
	"sasl.jaas.config":                           true,
	"ssl.keystore.key":                           true,
	"ssl.keystore.certificate.chain":             true,
	"ssl.truststore.certificates":                true,
	"basic.auth.user.info":                       true, // Schema Registry credentials "user:password"
	"bearer.auth.token":                          true,
	"sasl.oauthbearer.config":                    true,
	"ssl.key.pem":                                true, // librdkafka names, should they appear
	"sasl.oauthbearer.assertion.private.key.pem": true,
}

// IsSecretKey reports whether a Java (or librdkafka) key holds a secret: passwords, secrets,
// sasl.jaas.config, inline keys and certificates, credentials and tokens. Prefixed keys such as
// "B.consumer.ssl.key.password" or "producer.override.sasl.jaas.config" are recognised too.
func IsSecretKey(javaKey string) bool {
	k := strings.ToLower(strings.TrimSpace(javaKey))
	if secretKeys[k] {
		return true
	}
	for name := range secretKeys {
		if strings.HasSuffix(k, "."+name) {
			return true
		}
	}
	for _, w := range []string{"password", "passwd", "secret", "jaas", "credential", "user.info", "token", "passphrase", "apikey", "api.key", "private.key.pem"} {
		if strings.Contains(k, w) {
			// Paths and URLs of secrets are not secrets themselves.
			if strings.HasSuffix(k, ".location") || strings.HasSuffix(k, ".file") || strings.HasSuffix(k, ".url") ||
				strings.HasSuffix(k, ".client.id") || strings.HasSuffix(k, ".ms") || strings.HasSuffix(k, ".seconds") {
				return false
			}
			return true
		}
	}
	return strings.HasSuffix(k, ".key") || strings.HasSuffix(k, "_key")
}

// Redact returns value, or "[hidden]" if javaKey holds a secret.
func Redact(javaKey, value string) string {
	if IsSecretKey(javaKey) {
		return hidden
	}
	return value
}
