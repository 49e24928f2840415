package mm2wire

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/kmmproject/kmm/pkg/mm2wire/javatest"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json from the real Kafka jars (needs Java)")

const goldenFile = "testdata/vectors.json"

// wireVectors is the JSON written by GenVectors.java in "wire" mode. Strings are hex of UTF-8.
type wireVectors struct {
	KafkaVersion string `json:"kafka_version"`
	Heartbeats   []struct {
		SourceHex  string `json:"source_hex"`
		TargetHex  string `json:"target_hex"`
		Timestamp  int64  `json:"timestamp"`
		Key        string `json:"key"`
		Value      string `json:"value"`
		ConnectKey string `json:"connect_key"`
	} `json:"heartbeats"`
	Checkpoints []struct {
		GroupHex         string `json:"group_hex"`
		TopicHex         string `json:"topic_hex"`
		Partition        int32  `json:"partition"`
		UpstreamOffset   int64  `json:"upstream_offset"`
		DownstreamOffset int64  `json:"downstream_offset"`
		MetadataHex      string `json:"metadata_hex"`
		Key              string `json:"key"`
		Value            string `json:"value"`
		ConnectKey       string `json:"connect_key"`
	} `json:"checkpoints"`
	OffsetSyncs []struct {
		TopicHex         string `json:"topic_hex"`
		Partition        int32  `json:"partition"`
		UpstreamOffset   int64  `json:"upstream_offset"`
		DownstreamOffset int64  `json:"downstream_offset"`
		Key              string `json:"key"`
		Value            string `json:"value"`
	} `json:"offset_syncs"`
	SourceOffsets []struct {
		ConnectorHex string `json:"connector_hex"`
		ClusterHex   string `json:"cluster_hex"`
		TopicHex     string `json:"topic_hex"`
		Partition    int32  `json:"partition"`
		Offset       int64  `json:"offset"`
		Key          string `json:"key"`
		Value        string `json:"value"`
		Murmur2      int32  `json:"murmur2"`
		Partition25  int32  `json:"partition_25"`
		Partition7   int32  `json:"partition_7"`
	} `json:"source_offsets"`
	JSONStrings []struct {
		InHex string `json:"in_hex"`
		JSON  string `json:"json"`
	} `json:"json_strings"`
	JavaUTF8 []struct {
		In  string `json:"in"`
		Out string `json:"out"`
	} `json:"java_utf8"`
	Murmur2 []struct {
		In         string     `json:"in"`
		Murmur2    int32      `json:"murmur2"`
		ToPositive int32      `json:"to_positive"`
		Partitions [][2]int32 `json:"partitions"`
	} `json:"murmur2"`
	Decodes []struct {
		Kind             string `json:"kind"`
		Key              string `json:"key"`
		Value            string `json:"value"`
		OK               bool   `json:"ok"`
		SourceHex        string `json:"source_hex"`
		TargetHex        string `json:"target_hex"`
		Timestamp        int64  `json:"timestamp"`
		GroupHex         string `json:"group_hex"`
		TopicHex         string `json:"topic_hex"`
		Partition        int32  `json:"partition"`
		UpstreamOffset   int64  `json:"upstream_offset"`
		DownstreamOffset int64  `json:"downstream_offset"`
		MetadataHex      string `json:"metadata_hex"`
	} `json:"decodes"`
	JSONDecodes []struct {
		In           string `json:"in"`
		Class        string `json:"class"`
		ConnectorHex string `json:"connector_hex"`
		ClusterHex   string `json:"cluster_hex"`
		TopicHex     string `json:"topic_hex"`
		GroupHex     string `json:"group_hex"`
		SourceHex    string `json:"source_hex"`
		TargetHex    string `json:"target_hex"`
		Partition    int32  `json:"partition"`
		Offset       int64  `json:"offset"`
	} `json:"json_decodes"`
	StringLimits []struct {
		PrefixHex string `json:"prefix_hex"`
		UnitHex   string `json:"unit_hex"`
		Count     int    `json:"count"`
		OK        bool   `json:"ok"`
		KeyLen    int    `json:"key_len"`
	} `json:"string_limits"`
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func unhexStr(t *testing.T, s string) string { return string(unhex(t, s)) }

func eqHex(t *testing.T, what string, got []byte, wantHex string) {
	t.Helper()
	if g := hex.EncodeToString(got); g != wantHex {
		t.Errorf("%s:\n got %s\nwant %s", what, g, wantHex)
	}
}

// checkWireVectors compares every vector produced by MM2's Java classes with this package.
func checkWireVectors(t *testing.T, data []byte) {
	var v wireVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("vectors: %v", err)
	}
	if v.KafkaVersion == "" || len(v.Heartbeats) == 0 || len(v.Checkpoints) == 0 || len(v.OffsetSyncs) == 0 ||
		len(v.SourceOffsets) == 0 || len(v.JSONStrings) == 0 || len(v.JavaUTF8) == 0 || len(v.Murmur2) == 0 ||
		len(v.Decodes) == 0 || len(v.JSONDecodes) == 0 || len(v.StringLimits) == 0 {
		t.Fatalf("vectors: a section is missing or empty")
	}
	var n int

	t.Run("heartbeats", func(t *testing.T) {
		for _, c := range v.Heartbeats {
			h := Heartbeat{SourceClusterAlias: unhexStr(t, c.SourceHex), TargetClusterAlias: unhexStr(t, c.TargetHex), Timestamp: c.Timestamp}
			key, err := h.AppendKey(nil)
			if err != nil {
				t.Fatalf("%+v: %v", h, err)
			}
			eqHex(t, "heartbeat key "+c.SourceHex, key, c.Key)
			eqHex(t, "heartbeat value", h.AppendValue(nil), c.Value)
			eqHex(t, "heartbeat connect key "+c.SourceHex,
				HeartbeatOffsetKey{Connector: HeartbeatConnectorName, SourceClusterAlias: h.SourceClusterAlias, TargetClusterAlias: h.TargetClusterAlias}.AppendJSON(nil),
				c.ConnectKey)
			want := Heartbeat{SourceClusterAlias: JavaString(h.SourceClusterAlias), TargetClusterAlias: JavaString(h.TargetClusterAlias), Timestamp: h.Timestamp}
			got, err := DecodeHeartbeat(unhex(t, c.Key), unhex(t, c.Value))
			if err != nil || got != want {
				t.Errorf("DecodeHeartbeat(%s, %s) = %+v, %v; want %+v", c.Key, c.Value, got, err, want)
			}
			hk, err := DecodeHeartbeatOffsetKey(unhex(t, c.ConnectKey))
			if err != nil || hk.Connector != HeartbeatConnectorName || hk.SourceClusterAlias != want.SourceClusterAlias || hk.TargetClusterAlias != want.TargetClusterAlias {
				t.Errorf("DecodeHeartbeatOffsetKey(%s) = %+v, %v", c.ConnectKey, hk, err)
			}
			n++
		}
	})

	t.Run("checkpoints", func(t *testing.T) {
		for _, c := range v.Checkpoints {
			cp := Checkpoint{Group: unhexStr(t, c.GroupHex), Topic: unhexStr(t, c.TopicHex), Partition: c.Partition,
				UpstreamOffset: c.UpstreamOffset, DownstreamOffset: c.DownstreamOffset, Metadata: unhexStr(t, c.MetadataHex)}
			key, err := cp.AppendKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			val, err := cp.AppendValue(nil)
			if err != nil {
				t.Fatal(err)
			}
			eqHex(t, "checkpoint key", key, c.Key)
			eqHex(t, "checkpoint value", val, c.Value)
			eqHex(t, "checkpoint connect key",
				CheckpointOffsetKey{Connector: CheckpointConnectorName, Group: cp.Group, Topic: cp.Topic, Partition: cp.Partition}.AppendJSON(nil),
				c.ConnectKey)
			want := cp
			want.Group, want.Topic, want.Metadata = JavaString(cp.Group), JavaString(cp.Topic), JavaString(cp.Metadata)
			got, err := DecodeCheckpoint(unhex(t, c.Key), unhex(t, c.Value))
			if err != nil || got != want {
				t.Errorf("DecodeCheckpoint(%s, %s) = %+v, %v; want %+v", c.Key, c.Value, got, err, want)
			}
			ck, err := DecodeCheckpointOffsetKey(unhex(t, c.ConnectKey))
			if err != nil || ck != (CheckpointOffsetKey{Connector: CheckpointConnectorName, Group: want.Group, Topic: want.Topic, Partition: want.Partition}) {
				t.Errorf("DecodeCheckpointOffsetKey(%s) = %+v, %v", c.ConnectKey, ck, err)
			}
			n++
		}
	})

	t.Run("offset_syncs", func(t *testing.T) {
		for _, c := range v.OffsetSyncs {
			o := OffsetSync{Topic: unhexStr(t, c.TopicHex), Partition: c.Partition, UpstreamOffset: c.UpstreamOffset, DownstreamOffset: c.DownstreamOffset}
			key, err := o.AppendKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			eqHex(t, "offset-sync key", key, c.Key)
			eqHex(t, "offset-sync value", o.AppendValue(nil), c.Value)
			want := o
			want.Topic = JavaString(o.Topic)
			got, err := DecodeOffsetSync(unhex(t, c.Key), unhex(t, c.Value))
			if err != nil || got != want {
				t.Errorf("DecodeOffsetSync(%s, %s) = %+v, %v; want %+v", c.Key, c.Value, got, err, want)
			}
			n++
		}
	})

	t.Run("source_offsets", func(t *testing.T) {
		for _, c := range v.SourceOffsets {
			k := SourceOffsetKey{Connector: unhexStr(t, c.ConnectorHex), Cluster: unhexStr(t, c.ClusterHex), Topic: unhexStr(t, c.TopicHex), Partition: c.Partition}
			key := k.AppendJSON(nil)
			eqHex(t, "source offset key "+string(key), key, c.Key)
			eqHex(t, "source offset value", AppendOffsetValue(nil, c.Offset), c.Value)
			raw := unhex(t, c.Key)
			if got := Murmur2(raw); got != c.Murmur2 {
				t.Errorf("Murmur2(%s) = %d, want %d", raw, got, c.Murmur2)
			}
			if got := PartitionForKey(raw, 25); got != c.Partition25 {
				t.Errorf("PartitionForKey(%s, 25) = %d, want %d", raw, got, c.Partition25)
			}
			if got := PartitionForKey(raw, 7); got != c.Partition7 {
				t.Errorf("PartitionForKey(%s, 7) = %d, want %d", raw, got, c.Partition7)
			}
			want := SourceOffsetKey{Connector: JavaString(k.Connector), Cluster: JavaString(k.Cluster), Topic: JavaString(k.Topic), Partition: k.Partition}
			got, err := DecodeSourceOffsetKey(raw)
			if err != nil || got != want {
				t.Errorf("DecodeSourceOffsetKey(%s) = %+v, %v; want %+v", raw, got, err, want)
			}
			off, ok, err := DecodeOffsetValue(unhex(t, c.Value))
			if err != nil || !ok || off != c.Offset {
				t.Errorf("DecodeOffsetValue(%s) = %d, %v, %v; want %d", unhex(t, c.Value), off, ok, err, c.Offset)
			}
			n++
		}
	})

	t.Run("json_strings", func(t *testing.T) {
		for _, c := range v.JSONStrings {
			eqHex(t, "JSON string "+c.InHex, appendJSONString(nil, unhexStr(t, c.InHex)), c.JSON)
			n++
		}
	})

	t.Run("java_utf8", func(t *testing.T) {
		for _, c := range v.JavaUTF8 {
			eqHex(t, "JavaString("+c.In+")", []byte(JavaString(unhexStr(t, c.In))), c.Out)
			n++
		}
	})

	t.Run("murmur2", func(t *testing.T) {
		for _, c := range v.Murmur2 {
			in := unhex(t, c.In)
			if got := Murmur2(in); got != c.Murmur2 {
				t.Errorf("Murmur2(%s) = %d, want %d", c.In, got, c.Murmur2)
			}
			if got := ToPositive(Murmur2(in)); got != c.ToPositive {
				t.Errorf("ToPositive(Murmur2(%s)) = %d, want %d", c.In, got, c.ToPositive)
			}
			for _, p := range c.Partitions {
				if got := PartitionForKey(in, p[0]); got != p[1] {
					t.Errorf("PartitionForKey(%s, %d) = %d, want %d", c.In, p[0], got, p[1])
				}
			}
			n++
		}
	})

	t.Run("decodes", func(t *testing.T) {
		for _, c := range v.Decodes {
			key, value := unhex(t, c.Key), unhex(t, c.Value)
			var err error
			var got, want any
			switch c.Kind {
			case "heartbeat":
				got, err = DecodeHeartbeat(key, value)
				want = Heartbeat{SourceClusterAlias: unhexStr(t, c.SourceHex), TargetClusterAlias: unhexStr(t, c.TargetHex), Timestamp: c.Timestamp}
			case "checkpoint":
				got, err = DecodeCheckpoint(key, value)
				want = Checkpoint{Group: unhexStr(t, c.GroupHex), Topic: unhexStr(t, c.TopicHex), Partition: c.Partition,
					UpstreamOffset: c.UpstreamOffset, DownstreamOffset: c.DownstreamOffset, Metadata: unhexStr(t, c.MetadataHex)}
			case "offset_sync":
				got, err = DecodeOffsetSync(key, value)
				want = OffsetSync{Topic: unhexStr(t, c.TopicHex), Partition: c.Partition, UpstreamOffset: c.UpstreamOffset, DownstreamOffset: c.DownstreamOffset}
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			if (err == nil) != c.OK {
				t.Errorf("decode %s(%s, %s): err = %v, Java ok = %v", c.Kind, c.Key, c.Value, err, c.OK)
				continue
			}
			if err != nil {
				var fe *FieldError
				if !errors.As(err, &fe) || !(errors.Is(err, ErrTruncated) || errors.Is(err, ErrNegativeLength)) {
					t.Errorf("decode %s(%s, %s): error %v is not a *FieldError with a known cause", c.Kind, c.Key, c.Value, err)
				}
				continue
			}
			if got != want {
				t.Errorf("decode %s(%s, %s) = %+v, want %+v", c.Kind, c.Key, c.Value, got, want)
			}
			n++
		}
	})

	t.Run("json_decodes", func(t *testing.T) {
		for _, c := range v.JSONDecodes {
			in := unhex(t, c.In)
			sk, serr := DecodeSourceOffsetKey(in)
			ck, cerr := DecodeCheckpointOffsetKey(in)
			hk, herr := DecodeHeartbeatOffsetKey(in)
			off, ok, verr := DecodeOffsetValue(in)
			expect := func(name string, err error, want bool) {
				if (err == nil) != want {
					t.Errorf("%s(%q): err = %v, but Java classifies it as %s", name, in, err, c.Class)
				}
			}
			expect("DecodeSourceOffsetKey", serr, c.Class == "source_key")
			expect("DecodeCheckpointOffsetKey", cerr, c.Class == "checkpoint_key")
			expect("DecodeHeartbeatOffsetKey", herr, c.Class == "heartbeat_key")
			expect("DecodeOffsetValue", verr, c.Class == "offset" || c.Class == "offset_absent" || c.Class == "null")
			switch c.Class {
			case "source_key":
				want := SourceOffsetKey{Connector: unhexStr(t, c.ConnectorHex), Cluster: unhexStr(t, c.ClusterHex), Topic: unhexStr(t, c.TopicHex), Partition: c.Partition}
				if serr == nil && sk != want {
					t.Errorf("DecodeSourceOffsetKey(%q) = %+v, want %+v", in, sk, want)
				}
			case "checkpoint_key":
				want := CheckpointOffsetKey{Connector: unhexStr(t, c.ConnectorHex), Group: unhexStr(t, c.GroupHex), Topic: unhexStr(t, c.TopicHex), Partition: c.Partition}
				if cerr == nil && ck != want {
					t.Errorf("DecodeCheckpointOffsetKey(%q) = %+v, want %+v", in, ck, want)
				}
			case "heartbeat_key":
				want := HeartbeatOffsetKey{Connector: unhexStr(t, c.ConnectorHex), SourceClusterAlias: unhexStr(t, c.SourceHex), TargetClusterAlias: unhexStr(t, c.TargetHex)}
				if herr == nil && hk != want {
					t.Errorf("DecodeHeartbeatOffsetKey(%q) = %+v, want %+v", in, hk, want)
				}
			case "offset":
				if verr == nil && (!ok || off != c.Offset) {
					t.Errorf("DecodeOffsetValue(%q) = %d, %v; want %d, true", in, off, ok, c.Offset)
				}
			case "offset_absent", "null":
				if verr == nil && ok {
					t.Errorf("DecodeOffsetValue(%q) = %d, true; want no offset", in, off)
				}
			case "invalid", "parse_error":
			default:
				t.Fatalf("unknown class %q", c.Class)
			}
			n++
		}
	})

	t.Run("string_limits", func(t *testing.T) {
		for _, c := range v.StringLimits {
			s := unhexStr(t, c.PrefixHex) + strings.Repeat(unhexStr(t, c.UnitHex), c.Count)
			key, err := OffsetSync{Topic: s}.AppendKey([]byte("x"))
			if (err == nil) != c.OK {
				t.Errorf("OffsetSync key with a %d-byte topic: err = %v, Java ok = %v", len(s), err, c.OK)
				continue
			}
			if err != nil {
				if !errors.Is(err, ErrStringTooLong) || string(key) != "x" {
					t.Errorf("error %v, dst %q: want ErrStringTooLong and dst unchanged", err, key)
				}
				continue
			}
			if len(key)-1 != c.KeyLen {
				t.Errorf("key length %d, Java %d", len(key)-1, c.KeyLen)
			}
			n++
		}
	})
	t.Logf("checked %d vectors from Kafka %s", n, v.KafkaVersion)
}

// TestGoldenVectors checks the committed vectors (generated by the real jars); no Java needed.
func TestGoldenVectors(t *testing.T) {
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	checkWireVectors(t, data)
}

// TestJavaVectors regenerates the vectors with MM2's own classes from the Kafka jars, diffs them
// against the golden file (rewriting it with -update) and checks them, plus an exhaustive table
// of Java's UTF-8 decoding that is too big to commit.
func TestJavaVectors(t *testing.T) {
	out := javatest.Run(t, "wire", "utf8")
	fresh := out["wire"]
	javatest.CompareGolden(t, goldenFile, fresh, *update)
	checkWireVectors(t, fresh)

	sc := bufio.NewScanner(bytes.NewReader(out["utf8"]))
	lines := 0
	for sc.Scan() {
		in, want, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("utf8 table: bad line %q", sc.Text())
		}
		if got := hex.EncodeToString([]byte(JavaString(unhexStr(t, in)))); got != want {
			t.Errorf("JavaString(%s) = %s, Java %s", in, got, want)
		}
		lines++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < 100000 {
		t.Fatalf("utf8 table: only %d lines", lines)
	}
	t.Logf("compared %d byte sequences with Java's UTF-8 decoder", lines)
}
