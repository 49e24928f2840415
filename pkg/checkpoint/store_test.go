package checkpoint

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func rec(t *testing.T, off int64, cp mm2wire.Checkpoint) offsetsync.Record {
	t.Helper()
	k, v, err := Record(cp)
	if err != nil {
		t.Fatal(err)
	}
	return offsetsync.Record{Offset: off, Key: k, Value: v, Timestamp: time.UnixMilli(1000 + off)}
}

func TestStoreLoad(t *testing.T) {
	specKey := mustHex("00 02 67 31 00 08 41 2e 6f 72 64 65 72 73 00 00 00 03")
	recs := []offsetsync.Record{
		// MM2's bytes from the spec (§2.2): g1 A.orders[3] 10 -> 110, metadata "".
		{Offset: 0, Key: specKey, Value: mustHex("00 00 00 00 00 00 00 00 00 0a 00 00 00 00 00 00 00 6e 00 00"), Timestamp: time.UnixMilli(500)},
		rec(t, 1, mm2wire.Checkpoint{Group: "g2", Topic: "A.orders", Partition: 0, UpstreamOffset: 5, DownstreamOffset: 6, Metadata: "meta ü"}),
		// A later record of the same key wins.
		rec(t, 2, mm2wire.Checkpoint{Group: "g1", Topic: "A.orders", Partition: 3, UpstreamOffset: 20, DownstreamOffset: 120, Metadata: "x"}),
		// Garbage and a short value are skipped.
		{Offset: 3, Key: []byte{0xff}, Value: []byte{0}},
		{Offset: 4, Key: specKey, Value: []byte{0, 0, 1}},
		// A version-1 value is read with the v0 layout, trailing bytes ignored (Java's lenient read).
		{Offset: 5, Key: mustHex("00 02 67 33 00 01 74 00 00 00 00"), Value: mustHex("00 01 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 02 00 00 ff ff")},
		rec(t, 6, mm2wire.Checkpoint{Group: "skipme", Topic: "A.orders", Partition: 0, UpstreamOffset: 1, DownstreamOffset: 1}),
		// A tombstone deletes its key.
		{Offset: 7, Key: rec(t, 0, mm2wire.Checkpoint{Group: "g2", Topic: "A.orders"}).Key},
	}
	s := NewStore()
	st, err := Load(context.Background(), &offsetsync.SliceIterator{Records: recs}, s, func(g string) bool { return g != "skipme" })
	if err != nil {
		t.Fatal(err)
	}
	if !s.Loaded() || st.Records != 8 || st.Undecodable != 2 || st.Groups != 2 || st.Checkpoints != 2 || st.LastOffset != 7 {
		t.Fatalf("stats %+v loaded %v", st, s.Loaded())
	}
	if !strings.HasPrefix(st.FirstUndecodable, "offset 3:") {
		t.Fatalf("%q", st.FirstUndecodable)
	}
	e, ok := s.Get("g1", TP{Topic: "A.orders", Partition: 3})
	if !ok || e.UpstreamOffset != 20 || e.DownstreamOffset != 120 || e.Metadata != "x" || e.Time.UnixMilli() != 1002 {
		t.Fatalf("g1: %+v", e)
	}
	if e, ok := s.Get("g3", TP{Topic: "t"}); !ok || e.UpstreamOffset != 1 || e.DownstreamOffset != 2 {
		t.Fatalf("g3: %+v", e)
	}
	if _, ok := s.Get("g2", TP{Topic: "A.orders"}); ok {
		t.Fatal("tombstone did not delete")
	}
	if g := s.Groups(); len(g) != 2 || g[0] != "g1" || g[1] != "g3" {
		t.Fatalf("groups %v", g)
	}
	// Before the later record, the spec record was there with MM2's values.
	s2 := NewStore()
	if _, err := Load(context.Background(), &offsetsync.SliceIterator{Records: recs[:2]}, s2, nil); err != nil {
		t.Fatal(err)
	}
	e, _ = s2.Get("g1", TP{Topic: "A.orders", Partition: 3})
	if e.UpstreamOffset != 10 || e.DownstreamOffset != 110 || e.Metadata != "" || e.Time.UnixMilli() != 500 {
		t.Fatalf("spec record: %+v", e)
	}
	if e, _ := s2.Get("g2", TP{Topic: "A.orders"}); e.Metadata != "meta ü" {
		t.Fatalf("metadata %q", e.Metadata)
	}
}
