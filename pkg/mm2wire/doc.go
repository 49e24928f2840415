// Package mm2wire owns the byte formats of MirrorMaker 2's internal records, so that kmm and MM2
// can read each other's topics:
//
//   - heartbeats (key and v0 value, with its INT16 version prefix),
//   - checkpoints (key and v0 value, with its INT16 version prefix),
//   - offset syncs (key and value, no version prefix),
//   - the Connect offsets-topic records of the three MM2 connectors (JSON keys in MM2's exact
//     field order with Jackson's exact escaping, and the {"offset":N} value),
//   - Kafka's murmur2 hash and the Java producer's key partitioning, because the Connect offsets
//     topic is keyed and a key must land on the partition Java would pick.
//
// Encoders produce exactly the bytes MM2 (Kafka 4.1.1 jars, JDK 17) produces; this is proven by
// golden vectors generated from the real jars (testdata/vectors.json, regenerated and compared by
// TestJavaVectors). Encoders append to a caller-owned slice (AppendX(dst, ...)) and do not
// allocate when dst has room. Decoders are as lenient as MM2's Java readers: they ignore trailing
// bytes, accept any value version with the v0 layout, accept JSON keys in any field order and
// whitespace, and return errors, never panic, on malformed input.
//
// Strings: a Java String cannot hold bytes that are not UTF-8, so wherever Java would turn bytes
// into a String (Kafka's Utils.utf8, i.e. new String(b, UTF_8)) this package does the same
// replacement with U+FFFD (see JavaString). Encoders apply it to their inputs too, so a Go string
// that is not valid UTF-8 is encoded exactly as MM2 would encode the name it got from a broker.
//
// This package must not do I/O, talk to Kafka, read configuration, log, know about topic naming
// (that is pkg/policy) or import anything beyond the standard library. It has no cgo.
package mm2wire
