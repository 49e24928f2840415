package mm2wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// MaxStringLen is the longest STRING field, in UTF-8 bytes, that Kafka's protocol Struct
// encoding (an INT16 length prefix) can hold. Java throws on longer strings; so do the encoders.
const MaxStringLen = math.MaxInt16

// Version0 is the only value version MM2 knows for heartbeats and checkpoints, and the one the
// encoders write.
const Version0 int16 = 0

// Sentinel causes, for errors.Is. Decoders and encoders wrap them in a *FieldError.
var (
	// ErrTruncated: the input ends inside a field.
	ErrTruncated = errors.New("truncated")
	// ErrNegativeLength: a STRING length prefix is negative (Java rejects it too).
	ErrNegativeLength = errors.New("negative string length")
	// ErrStringTooLong: a string to encode has more than MaxStringLen UTF-8 bytes.
	ErrStringTooLong = errors.New("string longer than 32767 UTF-8 bytes")
	// ErrInvalid: a JSON record is not the MM2 record asked for (bad JSON, wrong shape, fields,
	// types or number range).
	ErrInvalid = errors.New("invalid")
)

// FieldError says which record and field could not be encoded or decoded.
type FieldError struct {
	Record string // e.g. "checkpoint key"
	Field  string // e.g. "topic"; empty if the record as a whole is wrong
	Err    error  // one of the sentinel errors above
	Detail string // optional detail
}

func (e *FieldError) Error() string {
	msg := "mm2wire: " + e.Record
	if e.Field != "" {
		msg += ": field " + fmt.Sprintf("%q", e.Field)
	}
	msg += ": " + e.Err.Error()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *FieldError) Unwrap() error { return e.Err }

// appendString appends a protocol STRING (INT16 length, UTF-8 bytes), Java-normalising s first.
func appendString(dst []byte, s string, record, field string) ([]byte, error) {
	if !utf8.ValidString(s) {
		s = JavaString(s)
	}
	if len(s) > MaxStringLen {
		return dst, &FieldError{Record: record, Field: field, Err: ErrStringTooLong,
			Detail: fmt.Sprintf("%d bytes", len(s))}
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...), nil
}

func appendInt16(dst []byte, v int16) []byte {
	return binary.BigEndian.AppendUint16(dst, uint16(v))
}

func appendInt32(dst []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v))
}

func appendInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v))
}

// reader reads protocol Struct fields in order, like Kafka's Schema.read. It never looks at
// bytes after the last field it is asked for.
type reader struct {
	b      []byte
	off    int
	record string
}

func (r *reader) need(n int, field string) error {
	if len(r.b)-r.off < n {
		return &FieldError{Record: r.record, Field: field, Err: ErrTruncated,
			Detail: fmt.Sprintf("need %d bytes at offset %d, have %d", n, r.off, len(r.b)-r.off)}
	}
	return nil
}

func (r *reader) int16(field string) (int16, error) {
	if err := r.need(2, field); err != nil {
		return 0, err
	}
	v := int16(binary.BigEndian.Uint16(r.b[r.off:]))
	r.off += 2
	return v, nil
}

func (r *reader) int32(field string) (int32, error) {
	if err := r.need(4, field); err != nil {
		return 0, err
	}
	v := int32(binary.BigEndian.Uint32(r.b[r.off:]))
	r.off += 4
	return v, nil
}

func (r *reader) int64(field string) (int64, error) {
	if err := r.need(8, field); err != nil {
		return 0, err
	}
	v := int64(binary.BigEndian.Uint64(r.b[r.off:]))
	r.off += 8
	return v, nil
}

func (r *reader) string(field string) (string, error) {
	n, err := r.int16(field)
	if err != nil {
		return "", err
	}
	if n < 0 {
		return "", &FieldError{Record: r.record, Field: field, Err: ErrNegativeLength,
			Detail: fmt.Sprintf("length %d", n)}
	}
	if err := r.need(int(n), field); err != nil {
		return "", err
	}
	s := JavaString(string(r.b[r.off : r.off+int(n)]))
	r.off += int(n)
	return s, nil
}

// ValueVersion returns the INT16 version prefix of a heartbeat or checkpoint value. MM2 only
// writes Version0 and reads any other version with the v0 layout (assertions are disabled in
// production); the decoders here do the same, so use this to warn about unknown versions.
func ValueVersion(value []byte) (int16, error) {
	r := reader{b: value, record: "value header"}
	return r.int16("version")
}
