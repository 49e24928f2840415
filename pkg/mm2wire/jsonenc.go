package mm2wire

import (
	"strconv"
	"unicode/utf8"
)

// jacksonEscape says how Jackson's default UTF-8 generator (jackson-core 2.19, the one behind
// Kafka Connect's JsonConverter) writes each ASCII byte inside a JSON string: 0 = as is,
// 'u' = \u00XX with upper-case hex, any other value = a backslash and that letter.
// Only control characters, the double quote and the backslash are escaped; the slash, '<', '>',
// '&', the apostrophe and DEL are written as they are.
var jacksonEscape = func() (t [utf8.RuneSelf]byte) {
	for c := 0; c < 0x20; c++ {
		t[c] = 'u'
	}
	t['\b'] = 'b'
	t['\t'] = 't'
	t['\n'] = 'n'
	t['\f'] = 'f'
	t['\r'] = 'r'
	t['"'] = '"'
	t['\\'] = '\\'
	return t
}()

const upperHex = "0123456789ABCDEF"

func appendU4(dst []byte, v uint16) []byte {
	return append(dst, '\\', 'u', upperHex[v>>12], upperHex[v>>8&0xF], upperHex[v>>4&0xF], upperHex[v&0xF])
}

// appendJSONString appends s as a JSON string exactly as Jackson writes the Java String that s
// denotes (see JavaString): control characters as \b \t \n \f \r or \u00XX, '"' and '\\'
// backslash-escaped, other BMP characters as raw UTF-8, and characters outside the BMP as an
// escaped UTF-16 surrogate pair (\uD83D\uDE00), which is what Jackson does by default.
func appendJSONString(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = JavaString(s)
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			e := jacksonEscape[c]
			if e == 0 {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			if e == 'u' {
				dst = appendU4(dst, uint16(c))
			} else {
				dst = append(dst, '\\', e)
			}
			i++
			start = i
			continue
		}
		if c < 0xF0 { // 2- or 3-byte sequence: a BMP character, written raw
			i++
			continue
		}
		// 4-byte sequence (valid, checked above): a supplementary character.
		r, size := utf8.DecodeRuneInString(s[i:])
		dst = append(dst, s[start:i]...)
		r -= 0x10000
		dst = appendU4(dst, uint16(0xD800+(r>>10)))
		dst = appendU4(dst, uint16(0xDC00+(r&0x3FF)))
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendJSONInt(dst []byte, v int64) []byte {
	return strconv.AppendInt(dst, v, 10)
}
