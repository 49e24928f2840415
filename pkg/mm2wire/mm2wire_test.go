package mm2wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "|", "").Replace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The worked examples of docs/mm2-compat.md §2 (also confirmed by the jar vectors).
func TestSpecExamples(t *testing.T) {
	hb := Heartbeat{SourceClusterAlias: "A", TargetClusterAlias: "B", Timestamp: 1700000000000}
	cp := Checkpoint{Group: "g1", Topic: "A.orders", Partition: 3, UpstreamOffset: 10, DownstreamOffset: 110}
	os := OffsetSync{Topic: "orders", Partition: 3, UpstreamOffset: 9, DownstreamOffset: 109}
	hbKey, _ := hb.AppendKey(nil)
	cpKey, _ := cp.AppendKey(nil)
	cpVal, _ := cp.AppendValue(nil)
	osKey, _ := os.AppendKey(nil)
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"heartbeat key", hbKey, "00 01 41 00 01 42"},
		{"heartbeat value", hb.AppendValue(nil), "00 00 00 00 01 8b cf e5 68 00"},
		{"checkpoint key", cpKey, "00 02 67 31 00 08 41 2e 6f 72 64 65 72 73 00 00 00 03"},
		{"checkpoint value", cpVal, "00 00 | 00 00 00 00 00 00 00 0a | 00 00 00 00 00 00 00 6e | 00 00"},
		{"offset-sync key", osKey, "00 06 6f 72 64 65 72 73 00 00 00 03"},
		{"offset-sync value", os.AppendValue(nil), "00 00 00 00 00 00 00 09 00 00 00 00 00 00 00 6d"},
	}
	for _, tc := range tests {
		if want := mustHex(t, tc.want); !bytes.Equal(tc.got, want) {
			t.Errorf("%s = % x, want % x", tc.name, tc.got, want)
		}
	}

	jsonTests := []struct {
		got, want string
	}{
		{string(SourceOffsetKey{Connector: SourceConnectorName, Cluster: "A", Topic: "orders", Partition: 3}.AppendJSON(nil)),
			`["MirrorSourceConnector",{"cluster":"A","partition":3,"topic":"orders"}]`},
		{string(CheckpointOffsetKey{Connector: CheckpointConnectorName, Group: "g1", Topic: "A.orders", Partition: 3}.AppendJSON(nil)),
			`["MirrorCheckpointConnector",{"partition":3,"topic":"A.orders","group":"g1"}]`},
		{string(HeartbeatOffsetKey{Connector: HeartbeatConnectorName, SourceClusterAlias: "A", TargetClusterAlias: "B"}.AppendJSON(nil)),
			`["MirrorHeartbeatConnector",{"sourceClusterAlias":"A","targetClusterAlias":"B"}]`},
		{string(AppendOffsetValue(nil, 41)), `{"offset":41}`},
		{string(AppendOffsetValue(nil, -9223372036854775808)), `{"offset":-9223372036854775808}`},
	}
	for _, tc := range jsonTests {
		if tc.got != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}

func TestJSONStringEscaping(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`q"b\s/`, `"q\"b\\s/"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x0b\x1f\x7f", `"\u0000\u0001\u000B\u001F` + "\x7f\""},
		{"<>&'", `"<>&'"`},
		{"é日\u2028\uFEFF\uFFFF", "\"é日\u2028\uFEFF\uFFFF\""},
		{"😀x𝄞", `"\uD83D\uDE00x\uD834\uDD1E"`},
		{"\U0010FFFF", `"\uDBFF\uDFFF"`},
		{"a\xffb", "\"a\uFFFDb\""},
		{"\xed\xa0\x80", "\"\uFFFD\""},
	}
	for _, tc := range tests {
		if got := string(appendJSONString(nil, tc.in)); got != tc.want {
			t.Errorf("appendJSONString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestJavaString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"ascii", "ascii"},
		{"ünï😀", "ünï😀"},
		{"\xff", "\uFFFD"},
		{"\xc0\x80", "\uFFFD\uFFFD"},                     // overlong NUL: two bad bytes
		{"\xed\xa0\x80", "\uFFFD"},                       // encoded surrogate: one replacement (JDK rule)
		{"\xed\xa0z", "\uFFFDz"},                         // ... two bytes swallowed when the third is bad
		{"\xe2\x82", "\uFFFD"},                           // truncated at the end: one replacement
		{"\xe2\x82x", "\uFFFDx"},                         // truncated before ASCII
		{"\xe0\x80\xaf", "\uFFFD\uFFFD\uFFFD"},           // overlong 3-byte
		{"\xf0\x9f\x98", "\uFFFD"},                       // truncated emoji at the end
		{"\xf0\x9f\x98q", "\uFFFDq"},                     // truncated emoji before ASCII
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"}, // above U+10FFFF
		{"\xf1\x80\x80\xe1\x80\x80", "\uFFFD\u1000"},
		{"\xc3\xc3\xa9", "\uFFFDé"},
	}
	for _, tc := range tests {
		if got := JavaString(tc.in); got != tc.want {
			t.Errorf("JavaString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = JavaString("valid ünï") }); n != 0 {
		t.Errorf("JavaString of valid UTF-8 allocates %v times", n)
	}
}

func TestMurmur2KnownValues(t *testing.T) {
	// kafka-clients UtilsTest values, confirmed against Utils.murmur2 in the 4.1.1 jar.
	tests := []struct {
		in   string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
		{"", 275646681},
	}
	for _, tc := range tests {
		if got := Murmur2([]byte(tc.in)); got != tc.want {
			t.Errorf("Murmur2(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
	if got := Murmur2(nil); got != 275646681 {
		t.Errorf("Murmur2(nil) = %d", got)
	}
	if got := ToPositive(-1); got != 0x7fffffff {
		t.Errorf("ToPositive(-1) = %d", got)
	}
	if got := ToPositive(-2147483648); got != 0 {
		t.Errorf("ToPositive(MinInt32) = %d", got)
	}
	if got := PartitionForKey([]byte("21"), 25); got != 15 {
		t.Errorf("PartitionForKey(21, 25) = %d, want 15", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("PartitionForKey(_, 0) did not panic")
		}
	}()
	PartitionForKey([]byte("x"), 0)
}

func TestDecodeLenient(t *testing.T) {
	// unknown versions are read with the v0 layout; trailing bytes are ignored
	hv := mustHex(t, "0007 0000018bcfe56800 ffff")
	if ts, err := DecodeHeartbeatValue(hv); err != nil || ts != 1700000000000 {
		t.Errorf("DecodeHeartbeatValue(v7) = %d, %v", ts, err)
	}
	if v, err := ValueVersion(hv); err != nil || v != 7 {
		t.Errorf("ValueVersion = %d, %v", v, err)
	}
	cv := mustHex(t, "ffff 000000000000000a 000000000000006e 0002 6d64 01020304")
	up, down, md, err := DecodeCheckpointValue(cv)
	if err != nil || up != 10 || down != 110 || md != "md" {
		t.Errorf("DecodeCheckpointValue(v-1) = %d %d %q %v", up, down, md, err)
	}
	ck := mustHex(t, "0002 6731 0001 74 00000003 dead")
	g, topic, p, err := DecodeCheckpointKey(ck)
	if err != nil || g != "g1" || topic != "t" || p != 3 {
		t.Errorf("DecodeCheckpointKey = %q %q %d %v", g, topic, p, err)
	}
	// invalid UTF-8 in a STRING is replaced as Java does
	src, tgt, err := DecodeHeartbeatKey(mustHex(t, "0001 ff 0003 eda080"))
	if err != nil || src != "\uFFFD" || tgt != "\uFFFD" {
		t.Errorf("DecodeHeartbeatKey(invalid UTF-8) = %q %q %v", src, tgt, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		fn   func() error
		want error
	}{
		{"heartbeat nil key", func() error { _, err := DecodeHeartbeat(nil, mustHex(t, "0000 0000000000000001")); return err }, ErrTruncated},
		{"heartbeat nil value", func() error { _, err := DecodeHeartbeat(mustHex(t, "0000 0000"), nil); return err }, ErrTruncated},
		{"heartbeat short ts", func() error { _, err := DecodeHeartbeatValue(mustHex(t, "0000 00000000")); return err }, ErrTruncated},
		{"heartbeat neg len", func() error { _, _, err := DecodeHeartbeatKey(mustHex(t, "ffff 41 0001 42")); return err }, ErrNegativeLength},
		{"heartbeat len past end", func() error { _, _, err := DecodeHeartbeatKey(mustHex(t, "0005 41")); return err }, ErrTruncated},
		{"checkpoint no partition", func() error { _, _, _, err := DecodeCheckpointKey(mustHex(t, "0000 0000 0000")); return err }, ErrTruncated},
		{"checkpoint neg metadata", func() error {
			_, _, _, err := DecodeCheckpointValue(mustHex(t, "0000 0000000000000000 0000000000000000 8000"))
			return err
		}, ErrNegativeLength},
		{"checkpoint no metadata", func() error {
			_, _, _, err := DecodeCheckpointValue(mustHex(t, "0000 0000000000000000 0000000000000000"))
			return err
		}, ErrTruncated},
		{"offset sync short value", func() error { _, _, err := DecodeOffsetSyncValue(make([]byte, 15)); return err }, ErrTruncated},
		{"offset sync empty key", func() error { _, err := DecodeOffsetSync([]byte{}, make([]byte, 16)); return err }, ErrTruncated},
		{"version of nothing", func() error { _, err := ValueVersion([]byte{0}); return err }, ErrTruncated},
	}
	for _, tc := range tests {
		err := tc.fn()
		var fe *FieldError
		if !errors.Is(err, tc.want) || !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "mm2wire: ") {
			t.Errorf("%s: err = %v, want a *FieldError wrapping %v", tc.name, err, tc.want)
		}
	}
}

func TestEncodeTooLong(t *testing.T) {
	long := strings.Repeat("a", MaxStringLen+1)
	ok := strings.Repeat("a", MaxStringLen)
	prefix := []byte("prefix")
	type enc func([]byte) ([]byte, error)
	tests := []struct {
		name  string
		fn    enc
		field string
	}{
		{"heartbeat source", Heartbeat{SourceClusterAlias: long}.AppendKey, "sourceClusterAlias"},
		{"heartbeat target", Heartbeat{SourceClusterAlias: "A", TargetClusterAlias: long}.AppendKey, "targetClusterAlias"},
		{"checkpoint group", Checkpoint{Group: long}.AppendKey, "group"},
		{"checkpoint topic", Checkpoint{Group: "g", Topic: long}.AppendKey, "topic"},
		{"checkpoint metadata", Checkpoint{Metadata: long}.AppendValue, "metadata"},
		{"offset sync topic", OffsetSync{Topic: long}.AppendKey, "topic"},
		// 32767 bytes of U+FFFD replacements would be 3x longer: the limit applies after Java's decoding
		{"invalid UTF-8 grows", OffsetSync{Topic: strings.Repeat("\xff", 11000)}.AppendKey, "topic"},
	}
	for _, tc := range tests {
		got, err := tc.fn(append([]byte(nil), prefix...))
		var fe *FieldError
		if !errors.Is(err, ErrStringTooLong) || !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: err = %v, want ErrStringTooLong on %s", tc.name, err, tc.field)
		}
		if !bytes.Equal(got, prefix) {
			t.Errorf("%s: dst = %q, want it unchanged", tc.name, got)
		}
	}
	if b, err := (OffsetSync{Topic: ok}).AppendKey(nil); err != nil || len(b) != 2+MaxStringLen+4 {
		t.Errorf("32767-byte topic: len %d, err %v", len(b), err)
	}
}

func TestAppendKeepsPrefix(t *testing.T) {
	dst := []byte("xyz")
	out, err := Checkpoint{Group: "g", Topic: "t", Partition: 1}.AppendKey(dst)
	if err != nil || !bytes.HasPrefix(out, []byte("xyz")) || !bytes.Equal(out[3:], mustHex(t, "0001 67 0001 74 00000001")) {
		t.Errorf("AppendKey = % x, %v", out, err)
	}
	out = SourceOffsetKey{Connector: "c", Cluster: "A", Topic: "t", Partition: 0}.AppendJSON([]byte("xyz"))
	if string(out) != `xyz["c",{"cluster":"A","partition":0,"topic":"t"}]` {
		t.Errorf("AppendJSON = %s", out)
	}
}

// The replicator calls the encoders per batch: with a buffer that has room they must not
// allocate.
func TestEncodersDoNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 1024)
	hb := Heartbeat{SourceClusterAlias: "us-west", TargetClusterAlias: "us-east", Timestamp: 1}
	cp := Checkpoint{Group: "group-1", Topic: "us-west.orders", Partition: 7, UpstreamOffset: 1, DownstreamOffset: 2, Metadata: "m"}
	osync := OffsetSync{Topic: "orders", Partition: 7, UpstreamOffset: 1, DownstreamOffset: 2}
	sk := SourceOffsetKey{Connector: SourceConnectorName, Cluster: "us-west", Topic: "orders", Partition: 7}
	ck := CheckpointOffsetKey{Connector: CheckpointConnectorName, Group: "g😀\n", Topic: "t", Partition: 7}
	hk := HeartbeatOffsetKey{Connector: HeartbeatConnectorName, SourceClusterAlias: "a", TargetClusterAlias: "b"}
	fns := map[string]func(){
		"heartbeat":   func() { b, _ := hb.AppendKey(buf[:0]); _ = hb.AppendValue(b) },
		"checkpoint":  func() { b, _ := cp.AppendKey(buf[:0]); _, _ = cp.AppendValue(b) },
		"offset sync": func() { b, _ := osync.AppendKey(buf[:0]); _ = osync.AppendValue(b) },
		"connect": func() {
			b := sk.AppendJSON(buf[:0])
			b = ck.AppendJSON(b)
			b = hk.AppendJSON(b)
			_ = AppendOffsetValue(b, 42)
		},
		"murmur2": func() { _ = PartitionForKey(buf[:10], 25) },
	}
	for name, fn := range fns {
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", name, n)
		}
	}
}

func TestDecodeOffsetKeysGoOnly(t *testing.T) {
	// Cases the Java vectors cannot express or that are documented differences.
	keyTests := []struct {
		in   string
		ok   bool
		want SourceOffsetKey
	}{
		{`["c",{"cluster":"\uD83D","partition":1,"topic":"t"}]`, true, SourceOffsetKey{"c", "\uFFFD", "t", 1}},              // lone high surrogate
		{`["c",{"cluster":"\uDE00x","partition":1,"topic":"t"}]`, true, SourceOffsetKey{"c", "\uFFFDx", "t", 1}},            // lone low surrogate
		{`["c",{"cluster":"\uD83D\uD83D\uDE00","partition":1,"topic":"t"}]`, true, SourceOffsetKey{"c", "\uFFFD😀", "t", 1}}, // high, then a pair
		{`["c",{"cluster":"\uD83D\n","partition":1,"topic":"t"}]`, true, SourceOffsetKey{"c", "\uFFFD\n", "t", 1}},
		{"[\"c\",{\"cluster\":\"\xc0\x80\",\"partition\":1,\"topic\":\"t\"}]", false, SourceOffsetKey{}}, // overlong: Jackson accepts, we refuse
		{"[\"c\",{\"cluster\":\"\xed\xa0\x80\",\"partition\":1,\"topic\":\"t\"}]", false, SourceOffsetKey{}},
		{`["c",{"cluster":"A","partition":1,"topic":"t"}]` + strings.Repeat("]", 5), true, SourceOffsetKey{"c", "A", "t", 1}},
		{strings.Repeat("[", 100000), false, SourceOffsetKey{}},
		{strings.Repeat("[", 999) + strings.Repeat("]", 999), false, SourceOffsetKey{}},
		{`["c",{"cluster":"A","partition":1,"topic":"t","cluster":"B"}]`, true, SourceOffsetKey{"c", "B", "t", 1}},
		{`["c",{"cluster":"A","partition":1,"topic":"t","cluster":5}]`, false, SourceOffsetKey{}},
		{`["c",{"cluster":"A","partition":1,"topic":"t"`, false, SourceOffsetKey{}},
		{`["c",{"cluster":"A","partition":1,"topic":"t\`, false, SourceOffsetKey{}},
		{`["c",{"cluster":"A","partition":1,"topic":"t\u00`, false, SourceOffsetKey{}},
		{`["c",{"cluster":"A","partition":-,"topic":"t"}]`, false, SourceOffsetKey{}},
		{``, false, SourceOffsetKey{}},
		{`null`, false, SourceOffsetKey{}},
	}
	for _, tc := range keyTests {
		got, err := DecodeSourceOffsetKey([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("DecodeSourceOffsetKey(%.60q) = %+v, %v; want %+v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("DecodeSourceOffsetKey(%.60q): error %v does not wrap ErrInvalid", tc.in, err)
		}
	}
	// a heartbeat key is not a source key and vice versa
	hk := []byte(`["MirrorHeartbeatConnector",{"sourceClusterAlias":"A","targetClusterAlias":"B"}]`)
	if _, err := DecodeSourceOffsetKey(hk); err == nil {
		t.Error("heartbeat key decoded as a source key")
	}
	if _, err := DecodeCheckpointOffsetKey(hk); err == nil {
		t.Error("heartbeat key decoded as a checkpoint key")
	}

	valueTests := []struct {
		in     []byte
		offset int64
		ok     bool
		err    bool
	}{
		{nil, 0, false, false},
		{[]byte{}, 0, false, false},
		{[]byte(" \n"), 0, false, false},
		{[]byte("null"), 0, false, false},
		{[]byte(`{"offset":null}`), 0, false, false},
		{[]byte(`{"offset":12}`), 12, true, false},
		{[]byte(`{"offset":-1}`), -1, true, false},
		{[]byte(`{"offset":12.0}`), 0, false, true},
		{[]byte(`{"offset":99999999999999999999}`), 0, false, true},
		{[]byte(`[1]`), 0, false, true},
		{[]byte(`{"offset":`), 0, false, true},
	}
	for _, tc := range valueTests {
		off, ok, err := DecodeOffsetValue(tc.in)
		if off != tc.offset || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("DecodeOffsetValue(%q) = %d, %v, %v", tc.in, off, ok, err)
		}
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	names := []string{"", "A", "us-west", "ünï", "😀", "q\"\\/\n\x00", "\xff\xfe", strings.Repeat("x", 1000)}
	for _, a := range names {
		for _, b := range names {
			hb := Heartbeat{SourceClusterAlias: a, TargetClusterAlias: b, Timestamp: -5}
			k, err := hb.AppendKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeHeartbeat(k, hb.AppendValue(nil))
			want := Heartbeat{JavaString(a), JavaString(b), -5}
			if err != nil || got != want {
				t.Errorf("heartbeat round trip %q %q: %+v %v", a, b, got, err)
			}
			cp := Checkpoint{Group: a, Topic: b, Partition: -1, UpstreamOffset: 1 << 40, DownstreamOffset: -1 << 40, Metadata: a + b}
			ck, _ := cp.AppendKey(nil)
			cv, _ := cp.AppendValue(nil)
			gotC, err := DecodeCheckpoint(ck, cv)
			wantC := Checkpoint{JavaString(a), JavaString(b), -1, 1 << 40, -1 << 40, JavaString(a + b)}
			if err != nil || gotC != wantC {
				t.Errorf("checkpoint round trip %q %q: %+v %v", a, b, gotC, err)
			}
			sk := SourceOffsetKey{Connector: a, Cluster: b, Topic: a, Partition: 2147483647}
			gotS, err := DecodeSourceOffsetKey(sk.AppendJSON(nil))
			if err != nil || gotS != (SourceOffsetKey{JavaString(a), JavaString(b), JavaString(a), 2147483647}) {
				t.Errorf("source key round trip %q %q: %+v %v", a, b, gotS, err)
			}
		}
	}
}

func BenchmarkCheckpointAppend(b *testing.B) {
	buf := make([]byte, 0, 256)
	cp := Checkpoint{Group: "group-1", Topic: "us-west.orders", Partition: 7, UpstreamOffset: 1, DownstreamOffset: 2}
	b.ReportAllocs()
	for b.Loop() {
		k, _ := cp.AppendKey(buf[:0])
		_, _ = cp.AppendValue(k)
	}
}

func BenchmarkSourceOffsetKeyAppend(b *testing.B) {
	buf := make([]byte, 0, 256)
	k := SourceOffsetKey{Connector: SourceConnectorName, Cluster: "us-west", Topic: "orders", Partition: 7}
	b.ReportAllocs()
	for b.Loop() {
		key := k.AppendJSON(buf[:0])
		_ = PartitionForKey(key, 25)
	}
}
