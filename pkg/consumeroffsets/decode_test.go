package consumeroffsets

import (
	"encoding/binary"
	"errors"
	"testing"
)

func enc(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case int16:
			b = binary.BigEndian.AppendUint16(b, uint16(v))
		case int32:
			b = binary.BigEndian.AppendUint32(b, uint32(v))
		case int64:
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		case string:
			b = binary.BigEndian.AppendUint16(b, uint16(len(v)))
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		}
	}
	return b
}

func TestDecodeVersions(t *testing.T) {
	key := enc(int16(1), "g1", "orders", int32(3))
	want := Commit{Group: "g1", Topic: "orders", Partition: 3, Offset: 42, Metadata: "m", Timestamp: 1700000000000}
	for name, val := range map[string][]byte{
		"v0": enc(int16(0), int64(42), "m", int64(1700000000000)),
		"v1": enc(int16(1), int64(42), "m", int64(1700000000000), int64(-1)),
		"v2": enc(int16(2), int64(42), "m", int64(1700000000000)),
		"v3": enc(int16(3), int64(42), int32(7), "m", int64(1700000000000)),
		"v4": enc(int16(4), int64(42), int32(7), []byte{2, 'm'}, int64(1700000000000), []byte{0}),
	} {
		got, err := Decode(key, val)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v", name, got, err)
		}
	}
	got, err := Decode(key, nil)
	if err != nil || !got.Deleted || got.Offset != -1 || got.Group != "g1" {
		t.Errorf("tombstone: %+v %v", got, err)
	}
	if _, err := Decode(enc(int16(2), "g1"), []byte{1}); !errors.Is(err, ErrNotCommit) {
		t.Errorf("group metadata key: %v", err)
	}
	for _, bad := range [][]byte{nil, {0}, enc(int16(1), "g1"), enc(int16(1), int16(-5))} {
		if _, err := Decode(bad, []byte{0, 0}); err == nil {
			t.Errorf("key %x decoded", bad)
		}
	}
	if _, err := Decode(key, enc(int16(3), int64(1))); err == nil {
		t.Error("truncated value decoded")
	}
	if _, err := Decode(key, enc(int16(9), int64(1))); err == nil {
		t.Error("unknown value version decoded")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(enc(int16(1), "g", "t", int32(0)), enc(int16(3), int64(1), int32(0), "", int64(0)))
	f.Add([]byte{0, 1}, []byte{0, 4, 0})
	f.Fuzz(func(t *testing.T, k, v []byte) {
		_, _ = Decode(k, v)
	})
}
