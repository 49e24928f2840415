package mm2wire

import "unicode/utf8"

// utf8Repl is U+FFFD, what Java substitutes for malformed UTF-8.
const utf8Repl = "\uFFFD"

// JavaString returns the UTF-8 bytes of the Java String that new String(b, UTF_8) yields for the
// bytes of s (JDK 17 and later; Kafka's Utils.utf8 and Type.STRING reads do exactly this).
// Valid UTF-8 is returned unchanged without allocating. Malformed sequences become U+FFFD with
// the JDK's rules for how many bytes one replacement swallows, which are not quite Unicode's
// "maximal subpart" rule: for example an encoded surrogate (ED A0 80) is one U+FFFD, and a
// truncated multi-byte sequence at the very end of the input is one U+FFFD.
func JavaString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string(appendJavaString(make([]byte, 0, len(s)+8), s))
}

func isCont(b byte) bool { return b&0xC0 == 0x80 }

// appendJavaString appends the Java-decoded form of s to dst. The rules, per lead byte:
//
//   - 00..7F: itself.
//   - C2..DF: with a continuation byte next, a 2-byte char; otherwise U+FFFD for the lead alone.
//   - E0..EF with two more bytes: U+FFFD for the lead alone if the second byte is not a
//     continuation (or is 80..9F after E0, an overlong form), for two bytes if only the third is
//     not a continuation, for all three if they encode a surrogate; otherwise a 3-byte char.
//     With one more byte that already fails the second-byte test: U+FFFD for the lead alone.
//     Otherwise (the input ends inside the sequence): one U+FFFD for the rest of the input.
//   - F0..F7 with three more bytes: a 4-byte char if all three are continuations and the code
//     point is in 10000..10FFFF; otherwise U+FFFD swallowing 1 byte (lead above F4, second byte
//     out of range for F0/F4 or not a continuation), 2 bytes (third byte not a continuation)
//     or 3 bytes. With fewer bytes left: U+FFFD for the lead alone if the lead is above F4 or
//     the second byte fails; else U+FFFD for lead and second byte, then, unless a third byte
//     follows that is not a continuation, the rest of the input is dropped.
//   - anything else (80..BF, C0, C1, F8..FF): U+FFFD for that byte.
func appendJavaString(dst []byte, s string) []byte {
	n := len(s)
	for i := 0; i < n; {
		b1 := s[i]
		switch {
		case b1 < 0x80:
			dst = append(dst, b1)
			i++
		case b1 >= 0xC2 && b1 <= 0xDF:
			if i+1 < n && isCont(s[i+1]) {
				dst = append(dst, b1, s[i+1])
				i += 2
			} else {
				dst = append(dst, utf8Repl...)
				i++
			}
		case b1 >= 0xE0 && b1 <= 0xEF:
			if i+2 < n {
				b2, b3 := s[i+1], s[i+2]
				badSecond := (b1 == 0xE0 && b2&0xE0 == 0x80) || !isCont(b2)
				switch {
				case badSecond:
					dst = append(dst, utf8Repl...)
					i++
				case !isCont(b3):
					dst = append(dst, utf8Repl...)
					i += 2
				case b1 == 0xED && b2 >= 0xA0: // UTF-16 surrogate
					dst = append(dst, utf8Repl...)
					i += 3
				default:
					dst = append(dst, b1, b2, b3)
					i += 3
				}
				continue
			}
			if i+1 < n {
				b2 := s[i+1]
				if (b1 == 0xE0 && b2&0xE0 == 0x80) || !isCont(b2) {
					dst = append(dst, utf8Repl...)
					i++
					continue
				}
			}
			dst = append(dst, utf8Repl...)
			i = n
		case b1 >= 0xF0 && b1 <= 0xF7:
			if i+3 < n {
				b2, b3, b4 := s[i+1], s[i+2], s[i+3]
				cp := rune(b1&0x07)<<18 | rune(b2&0x3F)<<12 | rune(b3&0x3F)<<6 | rune(b4&0x3F)
				if isCont(b2) && isCont(b3) && isCont(b4) && cp >= 0x10000 && cp <= 0x10FFFF {
					dst = append(dst, b1, b2, b3, b4)
					i += 4
					continue
				}
				dst = append(dst, utf8Repl...)
				switch {
				case bad4Second(b1, b2):
					i++
				case !isCont(b3):
					i += 2
				default:
					i += 3
				}
				continue
			}
			dst = append(dst, utf8Repl...)
			if b1 > 0xF4 || (i+1 < n && bad4Second(b1, s[i+1])) {
				i++
				continue
			}
			i += 2
			if i < n && !isCont(s[i]) {
				continue
			}
			i = n
		default:
			dst = append(dst, utf8Repl...)
			i++
		}
	}
	return dst
}

// bad4Second reports whether b2 cannot follow the 4-byte lead b1.
func bad4Second(b1, b2 byte) bool {
	return b1 > 0xF4 ||
		(b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) ||
		(b1 == 0xF4 && b2&0xF0 != 0x80) ||
		!isCont(b2)
}
