// Package mm2conf reads Apache Kafka MirrorMaker 2 (MM2) properties files
// exactly as MM2 4.x does and turns them into kmm's resolved flows.
//
// It owns:
//   - the java.util.Properties grammar (ParseProperties: separators '=', ':'
//     and whitespace, '#'/'!' comments at line start only, backslash
//     continuations, \uXXXX and other escapes, ISO-8859-1 input, trailing
//     whitespace kept, duplicate keys last-wins with a warning), with the
//     file:line of every entry;
//   - MM2's model: `clusters`, <alias>.* cluster properties, <S>-><T>.enabled
//     and <S>-><T>.* flow overrides, top-level connector keys, which herders
//     exist (heartbeats-only ones included), --clusters target selection, and
//     the precedence MirrorMakerConfig applies when it builds each herder's
//     worker config, each connector config and each client config — every
//     effective value carries its Origin (file:line, key, rule) or "default";
//   - every MM2 connector key with its Kafka 4.1.1 type and default
//     (keys_gen.go, generated from the real ConfigDefs), typed parsing as
//     Kafka's ConfigDef does it, MM2's raw parsing quirks (Boolean.parseBoolean
//     for A->B.enabled, an untrimmed separator), legacy and removed keys;
//   - ConfigProviders (FileConfigProvider, EnvVarConfigProvider,
//     DirectoryConfigProvider): ${provider:[path:]key} is resolved, values
//     that came from a provider are treated as secrets and never rendered;
//   - MM2's topic/group/config-property filters with Java regex semantics
//     (Filter), on github.com/dlclark/regexp2 with a Java-to-.NET translation
//     that rejects, with a clear message, what cannot be translated;
//   - the helpful checks behind `kmm config check` (unknown keys with "did
//     you mean", keys MM2 ignores where they are written, missing
//     bootstrap.servers, no enabled flow, ...) and the pure renderers of the
//     `kmm config check` and `kmm config explain` reports (text and JSON).
//
// It must not: print or log anything (findings are Diagnostics, reports are
// written only to the io.Writer a caller passes to a renderer); import
// confluent-kafka-go or use cgo; read flags or environment variables other
// than through LoadOptions; put a secret value into a Diagnostic, an error
// or a report. The Java-to-librdkafka translation of client settings
// belongs to the sub-package clientconf, which this package calls.
//
// # The two command-line forms and how they merge
//
// Form 1 is MM2's own: `kmm replicate mm2.properties [--clusters B ...]`.
// Form 2 is the one tutorials show (it mixes MirrorMaker 1 flags):
//
//	kmm replicate --clusters SOURCE,TARGET \
//	  --source-cluster-config source.properties \
//	  --target-cluster-config target.properties \
//	  --whitelist '.*' --config mirror-maker.properties
//
// Load merges them in this order, later steps winning:
//
//  1. The MM2 file (positional argument or --config) is read as MM2 reads it.
//  2. Form 2 only: SOURCE and TARGET are the first two aliases of
//     --clusters (or, without --clusters, the two aliases of the file's
//     `clusters`). Every key k of --source-cluster-config becomes
//     SOURCE.k, and every key of --target-cluster-config becomes TARGET.k,
//     each with its own file:line; they replace the same keys of the MM2
//     file (a warning names both lines when the values differ).
//  3. Form 2 only: `clusters` is set to "SOURCE, TARGET" when the file has
//     none, and missing aliases are appended to it (warning).
//  4. Form 2 only: the flow SOURCE->TARGET is enabled, as if the file said
//     SOURCE->TARGET.enabled = true, unless the file sets that key itself,
//     in which case the file wins. A warning shows the line to add, because
//     MM2 itself would not run the flow.
//  5. --whitelist R (MM1's flag, warning) becomes SOURCE->TARGET.topics = R
//     in form 2, or topics = R in form 1, replacing the file's value.
//  6. --clusters then keeps only the herders whose target is listed, as MM2
//     does (in form 2 that keeps SOURCE->TARGET and TARGET->SOURCE).
//
// After that, MM2's own precedence applies unchanged.
package mm2conf
