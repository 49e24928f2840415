package mm2wire

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// The fuzz targets check that decoders never panic, that decode∘encode is the identity on
// decoded records (and on Java-normalised strings), and that canonical input re-encodes to
// itself. Run e.g.: go test ./pkg/mm2wire -run '^$' -fuzz FuzzDecodeCheckpoint -fuzztime 20s

func addRecordSeeds(f *testing.F) {
	cp := Checkpoint{Group: "g1", Topic: "A.orders", Partition: 3, UpstreamOffset: 10, DownstreamOffset: 110, Metadata: "m"}
	ck, _ := cp.AppendKey(nil)
	cv, _ := cp.AppendValue(nil)
	f.Add(ck, cv)
	hb := Heartbeat{SourceClusterAlias: "A", TargetClusterAlias: "B", Timestamp: 1700000000000}
	hk, _ := hb.AppendKey(nil)
	f.Add(hk, hb.AppendValue(nil))
	os := OffsetSync{Topic: "orders", Partition: 3, UpstreamOffset: 9, DownstreamOffset: 109}
	ok, _ := os.AppendKey(nil)
	f.Add(ok, os.AppendValue(nil))
	f.Add([]byte{}, []byte{})
	f.Add([]byte{0xff, 0xff}, []byte{0x80, 0x00, 0, 0})
	f.Add([]byte("\x00\x03\xed\xa0\x80\x00\x01\xc3"), []byte("\x00\x07\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x01\xff"))
}

// int32At and int64At derive numbers from fuzz bytes for the encode-first round trips.
func int32At(b []byte) int32 {
	var x [4]byte
	copy(x[:], b)
	return int32(binary.BigEndian.Uint32(x[:]))
}

func int64At(b []byte) int64 {
	var x [8]byte
	copy(x[:], b)
	return int64(binary.BigEndian.Uint64(x[:]))
}

func clip(b []byte) string {
	if len(b) > MaxStringLen/4 { // even all-invalid bytes (3x growth) stay under the limit
		b = b[:MaxStringLen/4]
	}
	return string(b)
}

func FuzzDecodeCheckpoint(f *testing.F) {
	addRecordSeeds(f)
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if c, err := DecodeCheckpoint(key, value); err == nil {
			k, err := c.AppendKey(nil)
			if err != nil {
				t.Fatalf("re-encode key of %+v: %v", c, err)
			}
			v, err := c.AppendValue(nil)
			if err != nil {
				t.Fatalf("re-encode value of %+v: %v", c, err)
			}
			c2, err := DecodeCheckpoint(k, v)
			if err != nil || c2 != c {
				t.Fatalf("decode(encode(%+v)) = %+v, %v", c, c2, err)
			}
		}
		// encode first: arbitrary strings and numbers
		c := Checkpoint{Group: clip(key), Topic: clip(value), Partition: int32At(key),
			UpstreamOffset: int64At(value), DownstreamOffset: int64At(key), Metadata: clip(value)}
		k, err := c.AppendKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		v, err := c.AppendValue(nil)
		if err != nil {
			t.Fatal(err)
		}
		want := c
		want.Group, want.Topic, want.Metadata = JavaString(c.Group), JavaString(c.Topic), JavaString(c.Metadata)
		if got, err := DecodeCheckpoint(k, v); err != nil || got != want {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", c, got, err)
		}
		if _, err := DecodeCheckpoint(k[:len(k)-1], v); err == nil {
			t.Fatal("truncated key decoded")
		}
	})
}

func FuzzDecodeOffsetSync(f *testing.F) {
	addRecordSeeds(f)
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if o, err := DecodeOffsetSync(key, value); err == nil {
			k, err := o.AppendKey(nil)
			if err != nil {
				t.Fatalf("re-encode %+v: %v", o, err)
			}
			v := o.AppendValue(nil)
			if !bytes.Equal(v, value[:16]) {
				t.Fatalf("value % x re-encoded as % x", value, v)
			}
			o2, err := DecodeOffsetSync(k, v)
			if err != nil || o2 != o {
				t.Fatalf("decode(encode(%+v)) = %+v, %v", o, o2, err)
			}
		}
		o := OffsetSync{Topic: clip(key), Partition: int32At(value), UpstreamOffset: int64At(key), DownstreamOffset: int64At(value)}
		k, err := o.AppendKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		want := o
		want.Topic = JavaString(o.Topic)
		if got, err := DecodeOffsetSync(k, o.AppendValue(nil)); err != nil || got != want {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", o, got, err)
		}
	})
}

func FuzzDecodeHeartbeat(f *testing.F) {
	addRecordSeeds(f)
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if h, err := DecodeHeartbeat(key, value); err == nil {
			k, err := h.AppendKey(nil)
			if err != nil {
				t.Fatalf("re-encode %+v: %v", h, err)
			}
			h2, err := DecodeHeartbeat(k, h.AppendValue(nil))
			if err != nil || h2 != h {
				t.Fatalf("decode(encode(%+v)) = %+v, %v", h, h2, err)
			}
			if v, _ := ValueVersion(value); v == Version0 && !bytes.Equal(h.AppendValue(nil), value[:10]) {
				t.Fatalf("v0 value % x re-encoded differently", value)
			}
		}
		h := Heartbeat{SourceClusterAlias: clip(key), TargetClusterAlias: clip(value), Timestamp: int64At(key)}
		k, err := h.AppendKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		want := Heartbeat{JavaString(h.SourceClusterAlias), JavaString(h.TargetClusterAlias), h.Timestamp}
		if got, err := DecodeHeartbeat(k, h.AppendValue(nil)); err != nil || got != want {
			t.Fatalf("decode(encode(%+v)) = %+v, %v", h, got, err)
		}
	})
}

func FuzzDecodeSourceOffsetKey(f *testing.F) {
	for _, s := range []string{
		`["MirrorSourceConnector",{"cluster":"A","partition":3,"topic":"orders"}]`,
		` [ "x" , { "topic" : "t\u00e9\/" , "partition" : -0 , "cluster" : "\uD83D\uDE00" } ] trailing`,
		`["MirrorCheckpointConnector",{"partition":3,"topic":"A.orders","group":"g1"}]`,
		`{"offset":12}`, `null`, ``, `[[[[`, "\xef\xbb\xbf[\"a\",{}]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if k, err := DecodeSourceOffsetKey(b); err == nil {
			enc := k.AppendJSON(nil)
			k2, err := DecodeSourceOffsetKey(enc)
			if err != nil || k2 != k {
				t.Fatalf("decode(encode(%+v)) = %+v, %v (encoded %s)", k, k2, err, enc)
			}
			if enc2 := k2.AppendJSON(nil); !bytes.Equal(enc, enc2) {
				t.Fatalf("encoding not stable: %s vs %s", enc, enc2)
			}
		}
		// the other JSON decoders must not panic either
		_, _ = DecodeCheckpointOffsetKey(b)
		_, _ = DecodeHeartbeatOffsetKey(b)
		_, _, _ = DecodeOffsetValue(b)
		// encode first: arbitrary strings
		s := string(b)
		k := SourceOffsetKey{Connector: s, Cluster: s, Topic: s, Partition: int32At(b)}
		enc := k.AppendJSON(nil)
		want := SourceOffsetKey{JavaString(s), JavaString(s), JavaString(s), k.Partition}
		if got, err := DecodeSourceOffsetKey(enc); err != nil || got != want {
			t.Fatalf("decode(encode(%+v)) = %+v, %v (encoded %s)", k, got, err, enc)
		}
		off := int64At(b)
		if got, ok, err := DecodeOffsetValue(AppendOffsetValue(nil, off)); err != nil || !ok || got != off {
			t.Fatalf("offset value %d round trip: %d %v %v", off, got, ok, err)
		}
	})
}
