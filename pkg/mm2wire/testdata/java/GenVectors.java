// GenVectors prints byte-exact test vectors for kmm's pkg/mm2wire and pkg/policy, computed by
// MirrorMaker 2's own classes from the real Apache Kafka jars (nothing is re-implemented here:
// every expected value comes from a Kafka, Connect or Jackson class).
//
// Usage: java -cp <kafka libs>/*:<classes dir> GenVectors wire|policy|utf8 <output file>
//   wire:   golden file pkg/mm2wire/testdata/vectors.json
//   policy: golden file pkg/policy/testdata/vectors.json
//   utf8:   a large live-only table ("in out" hex pairs), not committed
// The Go tests (TestJavaVectors in both packages) compile and run this; -update rewrites goldens.
//
// Conventions of the wire output (a JSON object of sections, one vector per line):
//   - every input or output string is given as hex of its UTF-8 bytes ("..._hex"), so that control
//     characters, invalid UTF-8 and so on survive unchanged; byte outputs are hex too;
//   - policy vectors use plain JSON strings instead (all those names are valid Unicode);
//   - a Java null is a JSON null;
//   - "ok": false means the Java call threw.
// Run only with assertions disabled (the production default): decoders then accept any version.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonDeserializer;
import org.apache.kafka.connect.mirror.Checkpoint;
import org.apache.kafka.connect.mirror.DefaultReplicationPolicy;
import org.apache.kafka.connect.mirror.Heartbeat;
import org.apache.kafka.connect.mirror.IdentityReplicationPolicy;
import org.apache.kafka.connect.mirror.MirrorUtils;
import org.apache.kafka.connect.mirror.OffsetSync;
import org.apache.kafka.connect.mirror.ReplicationPolicy;
import org.apache.kafka.connect.mirror.SourceAndTarget;

import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

public class GenVectors {

    static final JsonNodeFactory F = JsonNodeFactory.instance;
    static final ObjectMapper OM = new ObjectMapper();

    // ---------------------------------------------------------------- inputs

    /** A test string: the raw bytes Go holds and the Java String MM2 would hold for them. */
    static final class Str {
        final byte[] raw;
        final String s;

        Str(String s) {
            this.s = s;
            this.raw = s.getBytes(StandardCharsets.UTF_8);
        }

        Str(byte[] raw) {
            this.raw = raw;
            this.s = new String(raw, StandardCharsets.UTF_8); // what Kafka's Utils.utf8 does
        }
    }

    static Str str(String s) {
        return new Str(s);
    }

    static Str bytes(int... b) {
        byte[] r = new byte[b.length];
        for (int i = 0; i < b.length; i++) r[i] = (byte) b[i];
        return new Str(r);
    }

    static String repeat(String s, int n) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) sb.append(s);
        return sb.toString();
    }

    /** Awkward names, used for aliases, groups, topics, metadata and connector names. */
    static List<Str> names() {
        List<Str> l = new ArrayList<>();
        for (String s : new String[] {
            "", "A", "B", "orders", "A.orders", "us-west", "g1", "my-group_1",
            "group with spaces", "ünïcödé", "日本語", "emoji😀", "Ω≈ç", "𝄞music",
            "quote\"s", "back\\slash", "sl/ash", "</script>", "&amp;<>'=", "tab\there",
            "nl\nthere", "cr\rthere", "ff\fthere", "bs\bthere", "nul\u0000x", "\u001f\u007f",
            "line\u2028sep\u2029", "\ufeffbom", "\ufffdrepl", "\u0080\u00ff\u0100", "\uffff",
            "{\"json\":[1,2]}", "[\"MirrorSourceConnector\",{}]", "a,b:c", "\\u0041",
            "A.B.heartbeats", "mm2-offset-syncs.B.internal",
            repeat("x", 249), repeat("é", 300), repeat("\u0001", 40),
        }) {
            l.add(str(s));
        }
        // invalid UTF-8 as a Go string may hold it; Java sees the decoded (replaced) String
        l.add(bytes(0xff));
        l.add(bytes('a', 0x80, 'b'));
        l.add(bytes(0xc0, 0x80));
        l.add(bytes(0xc1, 0xbf));
        l.add(bytes(0xed, 0xa0, 0x80));
        l.add(bytes(0xed, 0xbf, 0xbf, 'z'));
        l.add(bytes(0xe2, 0x82));
        l.add(bytes(0xe2, 0x82, 'x'));
        l.add(bytes(0xe0, 0x80, 0xaf));
        l.add(bytes(0xe0, 0xa0));
        l.add(bytes(0xf0, 0x9f, 0x98));
        l.add(bytes(0xf0, 0x9f, 0x98, 'q'));
        l.add(bytes(0xf0, 0x80, 0x80, 0x80));
        l.add(bytes(0xf4, 0x90, 0x80, 0x80));
        l.add(bytes(0xf5, 0x80, 0x80, 0x80));
        l.add(bytes(0xf8, 0x88, 0x80, 0x80, 0x80));
        l.add(bytes(0xfe, 0xff));
        l.add(bytes(0xc3));
        l.add(bytes(0xc3, 0xc3, 0xa9));
        l.add(bytes(0xe1, 0x80, 0xc0));
        l.add(bytes(0xf1, 0x80, 0x80, 0xe1, 0x80, 0x80));
        return l;
    }

    static final long[] OFFSETS = {0L, 1L, -1L, 9L, 110L, 255L, 256L, 1700000000000L, 2147483647L,
        2147483648L, -2147483649L, 4294967296L, Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE - 1};
    static final int[] PARTITIONS = {0, 1, 3, 127, 128, 65535, Integer.MAX_VALUE, -1, Integer.MIN_VALUE};

    // ---------------------------------------------------------------- helpers

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    static String hexOf(String s) {
        return s == null ? null : hex(s.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] unhex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return b;
    }

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) n += p.length;
        byte[] r = new byte[n];
        int o = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, r, o, p.length);
            o += p.length;
        }
        return r;
    }

    static Method method(Class<?> c, String name, Class<?>... types) throws Exception {
        Method m = c.getDeclaredMethod(name, types);
        m.setAccessible(true);
        return m;
    }

    static Object invoke(Method m, Object target, Object... args) throws Exception {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            Throwable c = e.getCause();
            if (c instanceof Exception) throw (Exception) c;
            throw e;
        }
    }

    static byte[] array(Object byteBuffer) {
        ByteBuffer b = (ByteBuffer) byteBuffer;
        byte[] r = new byte[b.remaining()];
        b.duplicate().get(r);
        return r;
    }

    static ConsumerRecord<byte[], byte[]> rec(byte[] key, byte[] value) {
        return new ConsumerRecord<>("t", 0, 0L, key, value);
    }

    // ---------------------------------------------------------------- wire vectors

    static Method hbKey, hbValue, hbPartition, cpKey, cpValue, cpPartition, osKey, osValue, wrapPartition;
    static JsonConverter keyConverter, valueConverter;

    static void initWire() throws Exception {
        hbKey = method(Heartbeat.class, "recordKey");
        hbValue = method(Heartbeat.class, "serializeValue", short.class);
        hbPartition = method(Heartbeat.class, "connectPartition");
        cpKey = method(Checkpoint.class, "recordKey");
        cpValue = method(Checkpoint.class, "serializeValue", short.class);
        cpPartition = method(Checkpoint.class, "connectPartition");
        osKey = method(OffsetSync.class, "recordKey");
        osValue = method(OffsetSync.class, "recordValue");
        wrapPartition = method(MirrorUtils.class, "wrapPartition", TopicPartition.class, String.class);
        // The Connect worker's internal converters: JsonConverter with schemas disabled.
        keyConverter = new JsonConverter();
        keyConverter.configure(Map.of("schemas.enable", "false"), true);
        valueConverter = new JsonConverter();
        valueConverter.configure(Map.of("schemas.enable", "false"), false);
    }

    /** What the Connect OffsetStorageWriter writes as the key: [namespace, partition map]. */
    static byte[] connectKey(String connector, Map<String, ?> partition) {
        return keyConverter.fromConnectData(connector, null, Arrays.asList(connector, partition));
    }

    static byte[] connectValue(Map<String, ?> offset) {
        return valueConverter.fromConnectData("x", null, offset);
    }

    static ArrayNode heartbeats() throws Exception {
        ArrayNode out = F.arrayNode();
        List<Str> names = names();
        List<Object[]> cases = new ArrayList<>();
        for (Str n : names) cases.add(new Object[] {n, str("B"), 1700000000000L});
        for (Str n : names) cases.add(new Object[] {str("A"), n, 0L});
        for (long o : OFFSETS) cases.add(new Object[] {str("A"), str("B"), o});
        for (Object[] c : cases) {
            Str s = (Str) c[0], t = (Str) c[1];
            long ts = (Long) c[2];
            Heartbeat hb = new Heartbeat(s.s, t.s, ts);
            ObjectNode v = F.objectNode();
            v.put("source_hex", hex(s.raw));
            v.put("target_hex", hex(t.raw));
            v.put("timestamp", ts);
            v.put("key", hex((byte[]) invoke(hbKey, hb)));
            v.put("value", hex(array(invoke(hbValue, hb, (short) 0))));
            v.put("connect_key", hex(connectKey("MirrorHeartbeatConnector", (Map<String, ?>) invoke(hbPartition, hb))));
            out.add(v);
        }
        return out;
    }

    static ArrayNode checkpoints() throws Exception {
        ArrayNode out = F.arrayNode();
        List<Str> names = names();
        List<Object[]> cases = new ArrayList<>();
        for (Str n : names) cases.add(new Object[] {n, str("A.orders"), 3, 10L, 110L, str("")});
        for (Str n : names) cases.add(new Object[] {str("g1"), n, 0, 0L, 0L, str("")});
        for (Str n : names) cases.add(new Object[] {str("g1"), str("A.orders"), 1, 5L, 6L, n});
        for (int p : PARTITIONS) cases.add(new Object[] {str("g1"), str("t"), p, 1L, 2L, str("m")});
        for (long o : OFFSETS) cases.add(new Object[] {str("g"), str("t"), 0, o, 7L, str("")});
        for (long o : OFFSETS) cases.add(new Object[] {str("g"), str("t"), 0, 7L, o, str("")});
        for (Object[] c : cases) {
            Str g = (Str) c[0], t = (Str) c[1], md = (Str) c[5];
            int p = (Integer) c[2];
            long up = (Long) c[3], down = (Long) c[4];
            Checkpoint cp = new Checkpoint(g.s, new TopicPartition(t.s, p), up, down, md.s);
            ObjectNode v = F.objectNode();
            v.put("group_hex", hex(g.raw));
            v.put("topic_hex", hex(t.raw));
            v.put("partition", p);
            v.put("upstream_offset", up);
            v.put("downstream_offset", down);
            v.put("metadata_hex", hex(md.raw));
            v.put("key", hex((byte[]) invoke(cpKey, cp)));
            v.put("value", hex(array(invoke(cpValue, cp, (short) 0))));
            v.put("connect_key", hex(connectKey("MirrorCheckpointConnector", (Map<String, ?>) invoke(cpPartition, cp))));
            out.add(v);
        }
        return out;
    }

    static ArrayNode offsetSyncs() throws Exception {
        ArrayNode out = F.arrayNode();
        List<Object[]> cases = new ArrayList<>();
        for (Str n : names()) cases.add(new Object[] {n, 3, 9L, 109L});
        for (int p : PARTITIONS) cases.add(new Object[] {str("orders"), p, 1L, 2L});
        for (long o : OFFSETS) cases.add(new Object[] {str("orders"), 0, o, -o});
        for (Object[] c : cases) {
            Str t = (Str) c[0];
            int p = (Integer) c[1];
            long up = (Long) c[2], down = (Long) c[3];
            OffsetSync os = new OffsetSync(new TopicPartition(t.s, p), up, down);
            ObjectNode v = F.objectNode();
            v.put("topic_hex", hex(t.raw));
            v.put("partition", p);
            v.put("upstream_offset", up);
            v.put("downstream_offset", down);
            v.put("key", hex((byte[]) invoke(osKey, os)));
            v.put("value", hex((byte[]) invoke(osValue, os)));
            out.add(v);
        }
        return out;
    }

    /** Source-connector offsets: key built by MirrorUtils.wrapPartition, value by MirrorUtils.wrapOffset. */
    static ArrayNode sourceOffsets() throws Exception {
        ArrayNode out = F.arrayNode();
        List<Object[]> cases = new ArrayList<>();
        List<Str> names = names();
        for (Str n : names) cases.add(new Object[] {str("MirrorSourceConnector"), n, str("orders"), 3, 41L});
        for (Str n : names) cases.add(new Object[] {str("MirrorSourceConnector"), str("A"), n, 0, 0L});
        for (Str n : names) cases.add(new Object[] {n, str("A"), str("orders"), 7, 1L});
        for (int p : PARTITIONS) cases.add(new Object[] {str("MirrorSourceConnector"), str("A"), str("orders"), p, 5L});
        for (long o : OFFSETS) cases.add(new Object[] {str("MirrorSourceConnector"), str("us-west"), str("t"), 1, o});
        for (Object[] c : cases) {
            Str conn = (Str) c[0], cluster = (Str) c[1], topic = (Str) c[2];
            int p = (Integer) c[3];
            long off = (Long) c[4];
            Map<String, ?> part = (Map<String, ?>) invoke(wrapPartition, null, new TopicPartition(topic.s, p), cluster.s);
            byte[] key = connectKey(conn.s, part);
            ObjectNode v = F.objectNode();
            v.put("connector_hex", hex(conn.raw));
            v.put("cluster_hex", hex(cluster.raw));
            v.put("topic_hex", hex(topic.raw));
            v.put("partition", p);
            v.put("offset", off);
            v.put("key", hex(key));
            v.put("value", hex(connectValue(MirrorUtils.wrapOffset(off))));
            v.put("murmur2", Utils.murmur2(key));
            v.put("partition_25", BuiltInPartitioner.partitionForKey(key, 25));
            v.put("partition_7", BuiltInPartitioner.partitionForKey(key, 7));
            out.add(v);
        }
        return out;
    }

    /** A single String through the Connect JsonConverter: Jackson's string escaping. */
    static ArrayNode jsonStrings() throws Exception {
        ArrayNode out = F.arrayNode();
        List<Str> in = new ArrayList<>();
        for (int c = 0; c < 0x80; c++) in.add(str(String.valueOf((char) c)));
        for (int c : new int[] {0x80, 0x9f, 0xa0, 0xe9, 0x7ff, 0x800, 0x2028, 0x2029, 0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xffff})
            in.add(str(String.valueOf((char) c)));
        in.add(str(new String(Character.toChars(0x1f600))));
        in.add(str(new String(Character.toChars(0x10ffff))));
        in.addAll(names());
        for (Str s : in) {
            ObjectNode v = F.objectNode();
            v.put("in_hex", hex(s.raw));
            v.put("json", hex(keyConverter.fromConnectData("x", null, s.s)));
            out.add(v);
        }
        return out;
    }

    /** How Java turns bytes into a String (Kafka's Utils.utf8 / new String(b, UTF_8)) and back. */
    static ArrayNode javaUTF8() throws Exception {
        ArrayNode out = F.arrayNode();
        List<byte[]> in = new ArrayList<>();
        for (Str s : names()) in.add(s.raw);
        // every 1- and 2-byte sequence whose first byte is not ASCII, followed by an ASCII byte
        for (int a = 0x80; a < 0x100; a++) {
            in.add(new byte[] {(byte) a});
            in.add(new byte[] {(byte) a, 'z'});
        }
        for (int a : new int[] {0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf4, 0xf5}) {
            for (int b = 0x70; b < 0x100; b += 3) {
                in.add(new byte[] {(byte) a, (byte) b, 'z'});
                in.add(new byte[] {(byte) a, (byte) b, (byte) 0x80, 'z'});
                in.add(new byte[] {(byte) a, (byte) b, (byte) 0x80, (byte) 0x80, 'z'});
                in.add(new byte[] {(byte) a, (byte) b, (byte) 0xbf, (byte) 0xbf});
            }
        }
        Random r = new Random(42);
        for (int i = 0; i < 300; i++) {
            byte[] b = new byte[r.nextInt(12)];
            for (int j = 0; j < b.length; j++) b[j] = (byte) (0x80 + r.nextInt(0x80));
            in.add(b);
        }
        for (byte[] b : in) {
            ObjectNode v = F.objectNode();
            v.put("in", hex(b));
            v.put("out", hex(new String(b, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8)));
            out.add(v);
        }
        return out;
    }

    static ArrayNode murmur() {
        ArrayNode out = F.arrayNode();
        List<byte[]> in = new ArrayList<>();
        for (String s : new String[] {"21", "foobar", "a-little-bit-long-string", "a-little-bit-longer-string",
            "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", "abc", "", "a", "ab", "abcd", "abcde"}) {
            in.add(s.getBytes(StandardCharsets.UTF_8));
        }
        Random r = new Random(7);
        for (int n = 0; n <= 40; n++) {
            byte[] b = new byte[n];
            r.nextBytes(b);
            in.add(b);
        }
        for (int i = 0; i < 60; i++) {
            byte[] b = new byte[r.nextInt(300)];
            r.nextBytes(b);
            in.add(b);
        }
        for (byte[] b : in) {
            ObjectNode v = F.objectNode();
            v.put("in", hex(b));
            v.put("murmur2", Utils.murmur2(b));
            v.put("to_positive", Utils.toPositive(Utils.murmur2(b)));
            ArrayNode parts = v.putArray("partitions");
            for (int n : new int[] {1, 2, 3, 25, 50, 1000, Integer.MAX_VALUE}) {
                ArrayNode pair = parts.addArray();
                pair.add(n);
                pair.add(BuiltInPartitioner.partitionForKey(b, n));
            }
            out.add(v);
        }
        return out;
    }

    // ---------------------------------------------------------------- decode vectors

    interface Decoder {
        ObjectNode decode(byte[] key, byte[] value) throws Exception;
    }

    static void decodeCase(ArrayNode out, String kind, byte[] key, byte[] value, Decoder d) {
        ObjectNode v = F.objectNode();
        v.put("kind", kind);
        v.put("key", hex(key));
        v.put("value", hex(value));
        try {
            ObjectNode res = d.decode(key, value);
            v.put("ok", true);
            v.setAll(res);
        } catch (Exception e) {
            v.put("ok", false);
        }
        out.add(v);
    }

    static ObjectNode decHeartbeat(byte[] key, byte[] value) {
        Heartbeat h = Heartbeat.deserializeRecord(rec(key, value));
        ObjectNode r = F.objectNode();
        r.put("source_hex", hexOf(h.sourceClusterAlias()));
        r.put("target_hex", hexOf(h.targetClusterAlias()));
        r.put("timestamp", h.timestamp());
        return r;
    }

    static ObjectNode decCheckpoint(byte[] key, byte[] value) {
        Checkpoint c = Checkpoint.deserializeRecord(rec(key, value));
        ObjectNode r = F.objectNode();
        r.put("group_hex", hexOf(c.consumerGroupId()));
        r.put("topic_hex", hexOf(c.topicPartition().topic()));
        r.put("partition", c.topicPartition().partition());
        r.put("upstream_offset", c.upstreamOffset());
        r.put("downstream_offset", c.downstreamOffset());
        r.put("metadata_hex", hexOf(c.metadata()));
        return r;
    }

    static ObjectNode decOffsetSync(byte[] key, byte[] value) {
        OffsetSync o = OffsetSync.deserializeRecord(rec(key, value));
        ObjectNode r = F.objectNode();
        r.put("topic_hex", hexOf(o.topicPartition().topic()));
        r.put("partition", o.topicPartition().partition());
        r.put("upstream_offset", o.upstreamOffset());
        r.put("downstream_offset", o.downstreamOffset());
        return r;
    }

    /** All prefixes of (key, value) plus the pair with trailing bytes. */
    static void truncations(ArrayNode out, String kind, byte[] key, byte[] value, Decoder d) {
        for (int i = 0; i <= key.length; i++) decodeCase(out, kind, Arrays.copyOf(key, i), value, d);
        for (int i = 0; i < value.length; i++) decodeCase(out, kind, key, Arrays.copyOf(value, i), d);
        decodeCase(out, kind, concat(key, new byte[] {1, 2, 3}), concat(value, new byte[] {(byte) 0xff}), d);
    }

    static ArrayNode decodes() throws Exception {
        ArrayNode out = F.arrayNode();
        byte[] trailer = unhex("deadbeef00");

        // heartbeats
        Heartbeat hb = new Heartbeat("A", "B", 1700000000000L);
        byte[] hk = (byte[]) invoke(hbKey, hb);
        byte[] hv = array(invoke(hbValue, hb, (short) 0));
        truncations(out, "heartbeat", hk, hv, GenVectors::decHeartbeat);
        for (short ver : new short[] {1, 2, -1, Short.MAX_VALUE, Short.MIN_VALUE}) {
            decodeCase(out, "heartbeat", hk, array(invoke(hbValue, hb, ver)), GenVectors::decHeartbeat);
        }
        decodeCase(out, "heartbeat", unhex("ffff41"), hv, GenVectors::decHeartbeat);            // negative length
        decodeCase(out, "heartbeat", unhex("8000"), hv, GenVectors::decHeartbeat);              // most negative length
        decodeCase(out, "heartbeat", unhex("0005414243"), hv, GenVectors::decHeartbeat);        // length past end
        decodeCase(out, "heartbeat", unhex("00000000"), hv, GenVectors::decHeartbeat);          // empty strings
        decodeCase(out, "heartbeat", unhex("0001ff0002c080"), hv, GenVectors::decHeartbeat);   // invalid UTF-8
        decodeCase(out, "heartbeat", unhex("0003eda0800001c3"), hv, GenVectors::decHeartbeat); // surrogate, truncated
        decodeCase(out, "heartbeat", concat(hk, trailer), concat(hv, trailer), GenVectors::decHeartbeat);

        // checkpoints
        Checkpoint cp = new Checkpoint("g1", new TopicPartition("A.orders", 3), 10L, 110L, "meta");
        byte[] ck = (byte[]) invoke(cpKey, cp);
        byte[] cv = array(invoke(cpValue, cp, (short) 0));
        truncations(out, "checkpoint", ck, cv, GenVectors::decCheckpoint);
        for (short ver : new short[] {1, 5, -1, Short.MAX_VALUE, Short.MIN_VALUE}) {
            decodeCase(out, "checkpoint", ck, array(invoke(cpValue, cp, ver)), GenVectors::decCheckpoint);
        }
        decodeCase(out, "checkpoint", ck, unhex("0000" + "000000000000000a" + "000000000000006e" + "ffff"), GenVectors::decCheckpoint);
        decodeCase(out, "checkpoint", ck, unhex("0000" + "000000000000000a" + "000000000000006e" + "0004ab"), GenVectors::decCheckpoint);
        decodeCase(out, "checkpoint", ck, unhex("0000" + "000000000000000a" + "000000000000006e" + "0002fffe"), GenVectors::decCheckpoint);
        decodeCase(out, "checkpoint", unhex("0002c3a90000ffffffff"), cv, GenVectors::decCheckpoint);
        decodeCase(out, "checkpoint", unhex("00000000" + "80000000"), cv, GenVectors::decCheckpoint);
        decodeCase(out, "checkpoint", unhex("0000ffff00000000"), cv, GenVectors::decCheckpoint);
        decodeCase(out, "checkpoint", concat(ck, trailer), concat(cv, trailer), GenVectors::decCheckpoint);

        // offset syncs
        OffsetSync os = new OffsetSync(new TopicPartition("orders", 3), 9L, 109L);
        byte[] ok = (byte[]) invoke(osKey, os);
        byte[] ov = (byte[]) invoke(osValue, os);
        truncations(out, "offset_sync", ok, ov, GenVectors::decOffsetSync);
        decodeCase(out, "offset_sync", unhex("0000ffffffff"), unhex("ffffffffffffffff8000000000000000"), GenVectors::decOffsetSync);
        decodeCase(out, "offset_sync", unhex("ffff00000000"), ov, GenVectors::decOffsetSync);
        decodeCase(out, "offset_sync", unhex("0002ff8000000001"), ov, GenVectors::decOffsetSync);
        decodeCase(out, "offset_sync", concat(ok, trailer), concat(ov, trailer), GenVectors::decOffsetSync);
        // a checkpoint value is 2+8+8+2 = 20 bytes: as an offset-sync value it parses (lenient)
        decodeCase(out, "offset_sync", ok, cv, GenVectors::decOffsetSync);
        return out;
    }

    /**
     * JSON records of the Connect offsets topic, parsed with Connect's own JsonDeserializer (the
     * Jackson setup JsonConverter uses). "class" says which MM2 connector key/value the parsed tree
     * is; kmm's decoders must accept exactly those and yield the same fields.
     */
    static ArrayNode jsonDecodes() throws Exception {
        ArrayNode out = F.arrayNode();
        List<byte[]> in = new ArrayList<>();
        for (String s : new String[] {
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"topic\":\"orders\",\"partition\":3,\"cluster\":\"A\"}]",
            "[\"MirrorSourceConnector\",{\"partition\":3,\"topic\":\"orders\",\"cluster\":\"A\"}]",
            " \t\r\n[ \"MirrorSourceConnector\" , { \"cluster\" : \"A\" ,\n\"partition\" : 3 , \"topic\" : \"orders\" } ] \n",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}]trailing garbage",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}][1]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"},1]",
            "[\"MirrorSourceConnector\"]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\",\"x\":1}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\",\"topic\":\"o2\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":\"3\",\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3.0,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3e0,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":003,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":-0,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":-1,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":+1,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":2147483647,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":2147483648,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":-2147483648,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":null,\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":1,\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":[]}]",
            "[null,{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}]",
            "[1,{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}]",
            "[\"My connector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}]",
            "[\"\\u004D\\/\\\"\\\\\\b\\f\\n\\r\\t\\u00e9\\u00E9\\ud83d\\ude00\",{\"cluster\":\"\\u0041\",\"partition\":3,\"topic\":\"o\\/r\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\\x\",\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\\u12\",\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\tB\",\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":'A',\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{cluster:\"A\",\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\",}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"},]",
            "[\"MirrorSourceConnector\" {\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}]",
            "/*c*/[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"ünï日本😀\",\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorCheckpointConnector\",{\"partition\":3,\"topic\":\"A.orders\",\"group\":\"g1\"}]",
            "[\"MirrorCheckpointConnector\",{\"group\":\"g1\",\"topic\":\"A.orders\",\"partition\":3}]",
            "[\"MirrorCheckpointConnector\",{\"group\":\"g1\",\"topic\":\"A.orders\"}]",
            "[\"MirrorHeartbeatConnector\",{\"sourceClusterAlias\":\"A\",\"targetClusterAlias\":\"B\"}]",
            "[\"MirrorHeartbeatConnector\",{\"targetClusterAlias\":\"B\",\"sourceClusterAlias\":\"A\"}]",
            "[\"MirrorHeartbeatConnector\",{\"sourceClusterAlias\":\"A\"}]",
            "{\"offset\":41}", "{\"offset\":0}", "{\"offset\":-1}", "{\"offset\":9223372036854775807}",
            "{\"offset\":-9223372036854775808}", "{\"offset\":9223372036854775808}", "{\"offset\":1.5}",
            "{\"offset\":1e3}", "{\"offset\":\"5\"}", "{\"offset\":null}", "{}", "{\"other\":1}",
            "{\"other\":1,\"offset\":7}", "{\"offset\":7,\"offset\":8}", " { \"offset\" : 12 } xyz", "{\"offset\":0012}",
            "null", " null ", "", "   ", "5", "[]", "[1]", "\"s\"", "{\"offset\":5", "{\"offset\"}", "{\"offset\":true}",
            "\ufeff{\"offset\":3}", "nullx", "null x", "null]", "null5", "nul", "true", "{\"offset\":nullx}",
            "{\"offset\":-}", "{\"offset\":1.}", "{\"offset\":.5}", "{\"offset\":-01}", "{\"offset\":1E2}", "{\"offset\":12 }",
            "{\"offset\":[1]}", "{\"offset\":{}}", "{\"a\":{\"b\":[1,{\"c\":null}]},\"offset\":4}", "{\"offset\":4,\"a\":[true,false,null,\"x\",-1.5e-3]}",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}] garbage",
            "[\"MirrorSourceConnector\",{\"\\u0063luster\":\"A\",\"partition\":3,\"topic\":\"orders\"}]",
            "[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"},",
            "[\"MirrorSourceConnector\",{\"cluster\":\"\\uD83D\\uDE00\",\"partition\":3,\"topic\":\"\\u00FF\"}]", "\ufeff[\"MirrorSourceConnector\",{\"cluster\":\"A\",\"partition\":3,\"topic\":\"orders\"}]",
        }) {
            in.add(s.getBytes(StandardCharsets.UTF_8));
        }
        // invalid UTF-8 inside JSON strings that Jackson rejects
        in.add(concat("[\"MirrorSourceConnector\",{\"cluster\":\"".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0x80},
            "\",\"partition\":3,\"topic\":\"orders\"}]".getBytes(StandardCharsets.UTF_8)));
        in.add(concat("[\"MirrorSourceConnector\",{\"cluster\":\"".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xff},
            "\",\"partition\":3,\"topic\":\"orders\"}]".getBytes(StandardCharsets.UTF_8)));
        in.add(concat("[\"MirrorSourceConnector\",{\"cluster\":\"".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xe2, (byte) 0x82},
            "\",\"partition\":3,\"topic\":\"orders\"}]".getBytes(StandardCharsets.UTF_8)));
        in.add(concat("[\"MirrorSourceConnector\",{\"cluster\":\"".getBytes(StandardCharsets.UTF_8), new byte[] {(byte) 0xc3},
            "\",\"partition\":3,\"topic\":\"orders\"}]".getBytes(StandardCharsets.UTF_8)));

        JsonDeserializer des = new JsonDeserializer();
        for (byte[] b : in) {
            ObjectNode v = F.objectNode();
            v.put("in", hex(b));
            JsonNode n;
            try {
                n = des.deserialize("x", b);
            } catch (Exception e) {
                v.put("class", "parse_error");
                out.add(v);
                continue;
            }
            classify(v, n);
            // cross-check with the converter the worker really uses
            try {
                Object c = valueConverter.toConnectData("x", b).value();
                v.put("converter", c == null ? "null" : c.getClass().getSimpleName());
            } catch (Exception e) {
                v.put("converter", "error");
            }
            out.add(v);
        }
        return out;
    }

    static boolean isText(JsonNode n) {
        return n != null && n.isTextual();
    }

    static boolean isInt32(JsonNode n) {
        return n != null && n.isIntegralNumber() && n.canConvertToInt();
    }

    static Set<String> fieldNames(JsonNode obj) {
        Set<String> s = new TreeSet<>();
        for (Iterator<String> it = obj.fieldNames(); it.hasNext(); ) s.add(it.next());
        return s;
    }

    static void classify(ObjectNode v, JsonNode n) {
        if (n == null || n.isMissingNode() || n.isNull()) {
            v.put("class", "null");
            return;
        }
        if (n.isObject()) {
            JsonNode off = n.get("offset");
            if (off == null || off.isNull()) {
                v.put("class", "offset_absent");
            } else if (off.isIntegralNumber() && off.canConvertToLong()) {
                v.put("class", "offset");
                v.put("offset", off.longValue());
            } else {
                v.put("class", "invalid");
            }
            return;
        }
        if (!n.isArray() || n.size() != 2 || !n.get(0).isTextual() || !n.get(1).isObject()) {
            v.put("class", "invalid");
            return;
        }
        v.put("connector_hex", hexOf(n.get(0).textValue()));
        JsonNode m = n.get(1);
        Set<String> f = fieldNames(m);
        if (f.equals(new TreeSet<>(List.of("cluster", "partition", "topic")))
            && isText(m.get("cluster")) && isText(m.get("topic")) && isInt32(m.get("partition"))) {
            v.put("class", "source_key");
            v.put("cluster_hex", hexOf(m.get("cluster").textValue()));
            v.put("topic_hex", hexOf(m.get("topic").textValue()));
            v.put("partition", m.get("partition").intValue());
        } else if (f.equals(new TreeSet<>(List.of("group", "partition", "topic")))
            && isText(m.get("group")) && isText(m.get("topic")) && isInt32(m.get("partition"))) {
            v.put("class", "checkpoint_key");
            v.put("group_hex", hexOf(m.get("group").textValue()));
            v.put("topic_hex", hexOf(m.get("topic").textValue()));
            v.put("partition", m.get("partition").intValue());
        } else if (f.equals(new TreeSet<>(List.of("sourceClusterAlias", "targetClusterAlias")))
            && isText(m.get("sourceClusterAlias")) && isText(m.get("targetClusterAlias"))) {
            v.put("class", "heartbeat_key");
            v.put("source_hex", hexOf(m.get("sourceClusterAlias").textValue()));
            v.put("target_hex", hexOf(m.get("targetClusterAlias").textValue()));
        } else {
            v.put("class", "invalid");
        }
    }

    /** STRING fields hold at most Short.MAX_VALUE UTF-8 bytes: [prefix, unit, count] strings. */
    static ArrayNode limits() throws Exception {
        ArrayNode out = F.arrayNode();
        Object[][] cases = {
            {"", "a", 32766}, {"", "a", 32767}, {"", "a", 32768}, {"", "a", 70000},
            {"", "é", 16383}, {"", "é", 16384}, {"a", "é", 16383}, {"aa", "é", 16383},
            {"", "😀", 8191}, {"abc", "😀", 8191}, {"abcd", "😀", 8191}, {"", "\uffff", 10922}, {"a", "\uffff", 10922},
        };
        for (Object[] c : cases) {
            String prefix = (String) c[0], unit = (String) c[1];
            int count = (Integer) c[2];
            String s = prefix + repeat(unit, count);
            ObjectNode v = F.objectNode();
            v.put("prefix_hex", hexOf(prefix));
            v.put("unit_hex", hexOf(unit));
            v.put("count", count);
            try {
                byte[] key = (byte[]) invoke(osKey, new OffsetSync(new TopicPartition(s, 0), 0, 0));
                v.put("ok", true);
                v.put("key_len", key.length);
            } catch (Exception e) {
                v.put("ok", false);
            }
            out.add(v);
        }
        return out;
    }

    /**
     * Live-only (too big for a golden file): every 1..4 byte string over an alphabet of UTF-8
     * boundary bytes, through new String(bytes, UTF_8) and back. One "in out" hex pair a line.
     */
    static void utf8Exhaustive(Writer w) throws Exception {
        int[] alpha = {'z', 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed,
            0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xff};
        for (int len = 1; len <= 4; len++) {
            int[] idx = new int[len];
            while (true) {
                byte[] b = new byte[len];
                for (int i = 0; i < len; i++) b[i] = (byte) alpha[idx[i]];
                w.write(hex(b) + " " + hex(new String(b, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8)) + "\n");
                int k = len - 1;
                while (k >= 0 && ++idx[k] == alpha.length) idx[k--] = 0;
                if (k < 0) break;
            }
        }
    }

    // ---------------------------------------------------------------- policy vectors

    static final String[] TOPICS = {
        "", "orders", "A.orders", "B.orders", "B.A.orders", "A.B.orders", "C.A.orders", "C.orders", "A.B.C.orders",
        "foo.", ".foo", "a..b", ".", "..", "...", "A..orders", "A.", "A.B.", "A..", ".A.orders", "..A",
        "heartbeats", "A.heartbeats", "B.heartbeats", "B.A.heartbeats", "A.B.heartbeats", "C.B.heartbeats",
        "xheartbeats", "heartbeats.A", "A_heartbeats", "B_A_heartbeats", "A--heartbeats", "A--B--heartbeats",
        "A.heartbeats.", "heartbeat", ".heartbeats", "A..heartbeats",
        "A_orders", "B_A_orders", "A_B_orders", "_orders", "orders_", "A__orders", "__", "_", "A_",
        "A--orders", "B--A--orders", "--orders", "orders--", "A---orders", "----", "A-orders",
        "A|orders", "B|A|orders", "A\\Eorders", "AxBxorders", "aaa", "aaaa",
        "A.checkpoints.internal", "B.checkpoints.internal", "A_checkpoints_internal", "A--checkpoints--internal",
        "A_checkpoints.internal", "A.checkpoints_internal", "checkpoints.internal", ".checkpoints.internal",
        "mm2-offset-syncs.B.internal", "mm2-offset-syncs_B_internal", "mm2-offset-syncs--B--internal",
        "mm2-offsets.A.internal", "mm2-configs.A.internal", "mm2-status.A.internal",
        "__consumer_offsets", "__transaction_state", "_schemas", "_confluent-metrics", ".hidden",
        "connect-offsets", "connect-internal", "my-internal", "x.internal", "x_internal", "x--internal",
        "xinternal", "internal", ".internal", "-internal", "A.orders.internal",
        "ünï.cödé", "日本.語", "A.日本", "a-b.c_d--e", "A.orders-internal",
        "A.A.orders", "B.B.orders", "us-west.orders", "us-east.us-west.orders",
    };
    static final String[] ALIASES = {"A", "B", "C", "", "us-west", "a.b", "x_y", "ünï"};
    static final String[][] FLOWS = {{"A", "B"}, {"B", "A"}, {"C", "B"}, {"B", "C"}, {"A", "A"}, {"us-west", "us-east"}};

    static Method isCycle, rename;
    static Constructor<?> sourceConnectorCtor, checkpointTaskCtor;

    static void initPolicy() throws Exception {
        Class<?> sc = Class.forName("org.apache.kafka.connect.mirror.MirrorSourceConnector");
        Class<?> tf = Class.forName("org.apache.kafka.connect.mirror.TopicFilter");
        Class<?> cpf = Class.forName("org.apache.kafka.connect.mirror.ConfigPropertyFilter");
        sourceConnectorCtor = sc.getDeclaredConstructor(SourceAndTarget.class, ReplicationPolicy.class, tf, cpf);
        sourceConnectorCtor.setAccessible(true);
        isCycle = method(sc, "isCycle", String.class);
        Class<?> ct = Class.forName("org.apache.kafka.connect.mirror.MirrorCheckpointTask");
        Class<?> oss = Class.forName("org.apache.kafka.connect.mirror.OffsetSyncStore");
        Class<?> cps = Class.forName("org.apache.kafka.connect.mirror.CheckpointStore");
        checkpointTaskCtor = ct.getDeclaredConstructor(String.class, String.class, ReplicationPolicy.class, oss, Set.class, Map.class, cps);
        checkpointTaskCtor.setAccessible(true);
        rename = method(ct, "renameTopicPartition", TopicPartition.class);
    }

    static ObjectNode policyConfig(String cls, String sep, String flag, String alias) {
        ObjectNode c = F.objectNode();
        c.put("class", cls);
        c.put("separator", sep); // null: key absent
        c.put("internal_separator_enabled", flag); // null: key absent; else the raw string
        c.put("source_cluster_alias", alias); // null: key absent (Identity only)
        return c;
    }

    static ReplicationPolicy makePolicy(String cls, String sep, String flag, String alias) {
        Map<String, Object> props = new HashMap<>();
        if (sep != null) props.put(DefaultReplicationPolicy.SEPARATOR_CONFIG, sep);
        if (flag != null) props.put(DefaultReplicationPolicy.INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG, flag);
        if (alias != null) props.put(IdentityReplicationPolicy.SOURCE_CLUSTER_ALIAS_CONFIG, alias);
        DefaultReplicationPolicy p = cls.equals("identity") ? new IdentityReplicationPolicy() : new DefaultReplicationPolicy();
        p.configure(props);
        return p;
    }

    static final String[] REMOTE_ALIASES = {"A", "B", "", "us-west"};

    /**
     * Policy vectors use plain JSON strings (all names here are valid Unicode). Section
     * "policy_configs": one line per configured policy. Section "policy_topics": one line per
     * (config, topic): [config index, topic, topicSource, upstreamTopic, originalTopic,
     * isHeartbeatsTopic, isCheckpointsTopic, isMM2InternalTopic, isInternalTopic,
     * [formatRemoteTopic(a, topic) for a in remote_aliases], [isCycle per flow],
     * [renameTopicPartition per flow]]. Flows are [source, target]: isCycle comes from
     * MirrorSourceConnector(source->target).isCycle, renaming from
     * MirrorCheckpointTask(source, target).renameTopicPartition.
     */
    static void policies(Map<String, ArrayNode> sections) throws Exception {
        List<String[]> seps = new ArrayList<>();
        // {separator or null, flag or null}
        seps.add(new String[] {null, null});
        seps.add(new String[] {null, "false"}); // flag without separator key: ignored
        seps.add(new String[] {".", null});
        seps.add(new String[] {".", "false"});
        seps.add(new String[] {"_", null});
        seps.add(new String[] {"_", "true"});
        seps.add(new String[] {"_", "false"});
        seps.add(new String[] {"_", "TRUE"});
        seps.add(new String[] {"--", null});
        seps.add(new String[] {"--", "false"});
        seps.add(new String[] {"|", null});
        seps.add(new String[] {"\\E", null});
        seps.add(new String[] {"x", "false"});
        seps.add(new String[] {"aa", null});
        seps.add(new String[] {"", null});
        seps.add(new String[] {"", "false"});
        List<Object[]> configs = new ArrayList<>();
        for (String[] s : seps) configs.add(new Object[] {"default", s[0], s[1], null});
        for (String[] s : seps) {
            // Identity shares Default's separator handling: a representative subset is enough.
            boolean keep = (s[0] == null && s[1] == null) || (s[0] != null && s[0].equals("_") && !"TRUE".equals(s[1]) && !"true".equals(s[1]))
                || (s[0] != null && s[0].equals("--") && s[1] == null) || (s[0] != null && s[0].isEmpty() && s[1] == null);
            if (!keep) continue;
            for (String alias : new String[] {null, "", "A", "B"}) configs.add(new Object[] {"identity", s[0], s[1], alias});
        }
        ArrayNode meta = F.arrayNode();
        ObjectNode m = meta.addObject();
        ArrayNode ra = m.putArray("remote_aliases");
        for (String a : REMOTE_ALIASES) ra.add(a);
        ArrayNode fl = m.putArray("flows");
        for (String[] f : FLOWS) fl.addArray().add(f[0]).add(f[1]);
        sections.put("policy_meta", meta);

        ArrayNode cfgs = F.arrayNode();
        ArrayNode topics = F.arrayNode();
        for (int ci = 0; ci < configs.size(); ci++) {
            Object[] c = configs.get(ci);
            String cls = (String) c[0], sep = (String) c[1], flag = (String) c[2], alias = (String) c[3];
            ReplicationPolicy p = makePolicy(cls, sep, flag, alias);
            ObjectNode v = F.objectNode();
            v.put("index", ci);
            v.set("config", policyConfig(cls, sep, flag, alias));
            v.put("heartbeats_topic", p.heartbeatsTopic());
            ArrayNode aliases = v.putArray("internal_topics");
            for (String a : ALIASES) aliases.addArray().add(a).add(p.checkpointsTopic(a)).add(p.offsetSyncsTopic(a));
            cfgs.add(v);
            List<Object> conns = new ArrayList<>();
            List<Object> tasks = new ArrayList<>();
            for (String[] f : FLOWS) {
                conns.add(sourceConnectorCtor.newInstance(new SourceAndTarget(f[0], f[1]), p, null, null));
                tasks.add(checkpointTaskCtor.newInstance(f[0], f[1], p, null, Set.of(), Map.of(), null));
            }
            for (String t : TOPICS) {
                ArrayNode tv = topics.addArray();
                tv.add(ci).add(t).add(p.topicSource(t)).add(p.upstreamTopic(t)).add(p.originalTopic(t));
                tv.add(p.isHeartbeatsTopic(t)).add(p.isCheckpointsTopic(t)).add(p.isMM2InternalTopic(t)).add(p.isInternalTopic(t));
                ArrayNode remote = tv.addArray();
                for (String a : REMOTE_ALIASES) remote.add(p.formatRemoteTopic(a, t));
                ArrayNode cyc = tv.addArray();
                for (Object conn : conns) cyc.add((Boolean) invoke(isCycle, conn, t));
                ArrayNode ren = tv.addArray();
                for (Object task : tasks) ren.add(((TopicPartition) invoke(rename, task, new TopicPartition(t, 0))).topic());
            }
        }
        sections.put("policy_configs", cfgs);
        sections.put("policy_topics", topics);
    }

    // ---------------------------------------------------------------- output

    static void section(Writer w, String name, ArrayNode a, boolean last) throws Exception {
        w.write("  \"" + name + "\": [\n");
        for (int i = 0; i < a.size(); i++) {
            w.write("    " + OM.writeValueAsString(a.get(i)) + (i + 1 < a.size() ? ",\n" : "\n"));
        }
        w.write("  ]" + (last ? "\n" : ",\n"));
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[0].equals("wire") || args[0].equals("policy") || args[0].equals("utf8"))) {
            System.err.println("usage: GenVectors wire|policy|utf8 <output file>");
            System.exit(2);
        }
        boolean assertions = false;
        assert assertions = true;
        if (assertions) throw new IllegalStateException("run without -ea: MM2 runs with assertions disabled");
        if (args[0].equals("utf8")) {
            try (Writer w = new OutputStreamWriter(new FileOutputStream(args[1]), StandardCharsets.UTF_8)) {
                utf8Exhaustive(w);
            }
            return;
        }
        Map<String, ArrayNode> sections = new LinkedHashMap<>();
        if (args[0].equals("wire")) {
            initWire();
            sections.put("heartbeats", heartbeats());
            sections.put("checkpoints", checkpoints());
            sections.put("offset_syncs", offsetSyncs());
            sections.put("source_offsets", sourceOffsets());
            sections.put("json_strings", jsonStrings());
            sections.put("java_utf8", javaUTF8());
            sections.put("murmur2", murmur());
            sections.put("decodes", decodes());
            sections.put("json_decodes", jsonDecodes());
            sections.put("string_limits", limits());
        } else {
            initPolicy();
            policies(sections);
        }
        try (Writer w = new OutputStreamWriter(new FileOutputStream(args[1]), StandardCharsets.UTF_8)) {
            w.write("{\n");
            w.write("  \"generator\": \"pkg/mm2wire/testdata/java/GenVectors.java\",\n");
            w.write("  \"kafka_version\": " + OM.writeValueAsString(org.apache.kafka.common.utils.AppInfoParser.getVersion()) + ",\n");
            int i = 0;
            for (Map.Entry<String, ArrayNode> e : sections.entrySet()) {
                section(w, e.getKey(), e.getValue(), ++i == sections.size());
            }
            w.write("}\n");
        }
    }
}
