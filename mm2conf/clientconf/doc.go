// Package clientconf translates Java Kafka client settings, as they appear in a MirrorMaker 2
// properties file after MM2's prefix resolution, into librdkafka configuration properties.
//
// It owns:
//   - the translation table (Table) from Java producer, consumer, admin and common client keys
//     to librdkafka 2.11 properties, with what happens to each key and why;
//   - SASL translation: sasl.jaas.config parsing with the Java JAAS tokenizer's rules, PLAIN,
//     SCRAM, OAUTHBEARER (OIDC client credentials, JWT bearer, unsecured JWT) and the refusal of
//     GSSAPI and of custom Java callback/login classes;
//   - TLS translation: JKS, PKCS12 and PEM key stores and trust stores (files or inline PEM),
//     read in Go and handed to librdkafka as in-memory PEM (ssl.ca.pem, ssl.certificate.pem,
//     ssl.key.pem with an unencrypted PKCS#8 key);
//   - secret detection and redaction of Java keys (IsSecretKey, Redact).
//
// It must not: import confluent-kafka-go or use cgo; print or log anything (every finding is a
// Diag returned to the caller); put a secret value into a Diag, an error or Origin; read any file
// other than the key and trust stores a setting names (and only through Options.ReadFile); know
// about MM2 prefixes, flows or defaults of MM2 itself. The caller (package mm2conf) resolves
// prefixes and MM2's own client defaults and passes one cluster's settings for one role.
//
// Semantics in brief (docs/client-settings.md has the full table):
//   - Values are trimmed, as Java's ConfigDef does, and validated by their Java type.
//   - A key Java defines only for another role (a consumer key given to the producer) is
//     dropped without a diagnostic, as MM2's own clients only log "isn't a known config" for it;
//     it is listed in Result.Ignored.
//   - A key no Java client defines gets a Warning ("not a Kafka client setting, ignored").
//   - A Java-only knob with no librdkafka meaning gets a Warning, unless it is set to its Java
//     default or comes from a default (Pos "default").
//   - Anything kmm cannot honour without changing semantics is an Error.
//   - ssl.* settings are only read when security.protocol is SSL or SASL_SSL, and sasl.* only
//     when it is SASL_PLAINTEXT or SASL_SSL, as Java does.
//   - Where the Java client's default differs from librdkafka's in a way that changes what is
//     read or written, the Java default is set explicitly (see JavaDefaults).
package clientconf
