// Package consumeroffsets decodes the offset-commit records of Kafka's internal
// __consumer_offsets topic, so kmm can follow consumer group commits as they happen (as Burrow
// does) instead of polling every group. It only decodes; it does no I/O and never panics on
// malformed input.
package consumeroffsets

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Commit is one offset commit (or deletion) of a group for a partition.
type Commit struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64 // -1 when Deleted
	Metadata  string
	Timestamp int64 // commit time, epoch ms
	Deleted   bool  // tombstone: the committed offset was removed
}

// ErrNotCommit is returned for records that are not offset commits (group metadata, KIP-848
// consumer-group records, transaction markers' companions...). Callers skip them.
var ErrNotCommit = errors.New("not an offset commit record")

type reader struct {
	b   []byte
	err error
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if len(r.b) < n {
		r.err = fmt.Errorf("truncated record: need %d more bytes, have %d", n, len(r.b))
		return false
	}
	return true
}

func (r *reader) i16() int16 {
	if !r.need(2) {
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.b))
	r.b = r.b[2:]
	return v
}

func (r *reader) i32() int32 {
	if !r.need(4) {
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	return v
}

func (r *reader) i64() int64 {
	if !r.need(8) {
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *reader) str() string {
	n := int(r.i16())
	if r.err != nil {
		return ""
	}
	if n < 0 {
		r.err = errors.New("negative string length")
		return ""
	}
	if !r.need(n) {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// compactStr reads a flexible-version COMPACT_STRING (uvarint length+1).
func (r *reader) compactStr() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n == 0 {
		return "" // null
	}
	l := int(n - 1)
	if l < 0 || !r.need(l) {
		if r.err == nil {
			r.err = errors.New("bad compact string length")
		}
		return ""
	}
	s := string(r.b[:l])
	r.b = r.b[l:]
	return s
}

// Decode decodes one __consumer_offsets record. A nil value is a tombstone.
func Decode(key, value []byte) (Commit, error) {
	kr := &reader{b: key}
	kv := kr.i16()
	if kr.err != nil {
		return Commit{}, kr.err
	}
	if kv != 0 && kv != 1 {
		return Commit{}, ErrNotCommit
	}
	c := Commit{Group: kr.str(), Topic: kr.str(), Partition: kr.i32(), Offset: -1}
	if kr.err != nil {
		return Commit{}, kr.err
	}
	if value == nil {
		c.Deleted = true
		return c, nil
	}
	vr := &reader{b: value}
	vv := vr.i16()
	switch vv {
	case 0:
		c.Offset, c.Metadata, c.Timestamp = vr.i64(), vr.str(), vr.i64()
	case 1:
		c.Offset, c.Metadata, c.Timestamp = vr.i64(), vr.str(), vr.i64()
		_ = vr.i64() // expire timestamp
	case 2:
		c.Offset, c.Metadata, c.Timestamp = vr.i64(), vr.str(), vr.i64()
	case 3:
		c.Offset = vr.i64()
		_ = vr.i32() // leader epoch
		c.Metadata, c.Timestamp = vr.str(), vr.i64()
	case 4: // flexible version
		c.Offset = vr.i64()
		_ = vr.i32()
		c.Metadata = vr.compactStr()
		c.Timestamp = vr.i64()
	default:
		return Commit{}, fmt.Errorf("unknown offset commit value version %d", vv)
	}
	if vr.err != nil {
		return Commit{}, vr.err
	}
	return c, nil
}
