package mm2wire

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON reader with the leniency of Kafka Connect's JsonDeserializer (Jackson 2.19
// ObjectMapper.readTree with ALLOW_LEADING_ZEROS_FOR_NUMBERS):
//
//   - a UTF-8 byte order mark and JSON whitespace before the value are skipped;
//   - only the first value is read: anything after it is ignored, garbage included;
//   - empty or whitespace-only input is "no value" (Jackson's MissingNode, i.e. null);
//   - numbers may have leading zeros ("007", "-01");
//   - duplicate object keys: the last one wins;
//   - no comments, single quotes, unquoted names, trailing commas, NaN, "+1", raw control
//     characters in strings, or malformed escapes.
//
// Known, deliberate differences: bytes that are not UTF-8 inside strings are always rejected
// (Jackson accepts some malformed forms, e.g. overlong or surrogate encodings, and builds
// strings Go cannot hold); a \u escape of an unpaired surrogate becomes U+FFFD.

const maxJSONDepth = 1000 // Jackson's default StreamReadConstraints nesting limit

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

type jvalue struct {
	kind     jkind
	str      string // string value; number literal; "true"/"false"
	integral bool   // number without fraction or exponent
	arr      []jvalue
	obj      []jmember
}

type jmember struct {
	name string
	val  jvalue
}

// get returns the last member called name (Jackson keeps the last duplicate).
func (v *jvalue) get(name string) (*jvalue, bool) {
	for i := len(v.obj) - 1; i >= 0; i-- {
		if v.obj[i].name == name {
			return &v.obj[i].val, true
		}
	}
	return nil, false
}

// hasExactly reports whether the object's distinct member names are exactly want.
func (v *jvalue) hasExactly(want ...string) bool {
	for _, m := range v.obj {
		found := false
		for _, w := range want {
			if m.name == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	for _, w := range want {
		if _, ok := v.get(w); !ok {
			return false
		}
	}
	return true
}

type jsonSyntaxError struct {
	off int
	msg string
}

func (e *jsonSyntaxError) Error() string {
	return "JSON syntax error at offset " + strconv.Itoa(e.off) + ": " + e.msg
}

type jparser struct {
	b     []byte
	i     int
	depth int
}

// parseJSON reads the first JSON value of b. present is false for empty or blank input.
func parseJSON(b []byte) (v jvalue, present bool, err error) {
	p := jparser{b: b}
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		p.i = 3
	}
	p.ws()
	if p.i == len(p.b) {
		return jvalue{}, false, nil
	}
	v, err = p.value()
	if err != nil {
		return jvalue{}, false, err
	}
	return v, true, nil
}

func (p *jparser) fail(msg string) error { return &jsonSyntaxError{off: p.i, msg: msg} }

func (p *jparser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jparser) value() (jvalue, error) {
	if p.i >= len(p.b) {
		return jvalue{}, p.fail("unexpected end of input")
	}
	switch c := p.b[p.i]; {
	case c == '"':
		s, err := p.string()
		return jvalue{kind: jString, str: s}, err
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", jvalue{kind: jBool, str: "true"})
	case c == 'f':
		return p.literal("false", jvalue{kind: jBool, str: "false"})
	case c == 'n':
		return p.literal("null", jvalue{kind: jNull})
	default:
		return jvalue{}, p.fail("unexpected character " + strconv.QuoteRune(rune(c)))
	}
}

func isIdentPart(c byte) bool {
	return c == '_' || c == '$' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		(c >= 'A' && c <= 'Z') || c >= utf8.RuneSelf
}

func (p *jparser) literal(word string, v jvalue) (jvalue, error) {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return jvalue{}, p.fail("unrecognized token")
	}
	p.i += len(word)
	if p.i < len(p.b) && isIdentPart(p.b[p.i]) {
		return jvalue{}, p.fail("unrecognized token")
	}
	return v, nil
}

func (p *jparser) digits() int {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

func (p *jparser) number() (jvalue, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	if p.digits() == 0 {
		return jvalue{}, p.fail("invalid number")
	}
	integral := true
	if p.i < len(p.b) && p.b[p.i] == '.' {
		integral = false
		p.i++
		if p.digits() == 0 {
			return jvalue{}, p.fail("invalid number: no digits after '.'")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		integral = false
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return jvalue{}, p.fail("invalid number: no exponent digits")
		}
	}
	return jvalue{kind: jNumber, str: string(p.b[start:p.i]), integral: integral}, nil
}

func hexVal(c byte) (uint16, bool) {
	switch {
	case c >= '0' && c <= '9':
		return uint16(c - '0'), true
	case c >= 'a' && c <= 'f':
		return uint16(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return uint16(c-'A') + 10, true
	}
	return 0, false
}

func (p *jparser) u4() (uint16, error) {
	if len(p.b)-p.i < 4 {
		return 0, p.fail("truncated \\u escape")
	}
	var v uint16
	for k := 0; k < 4; k++ {
		h, ok := hexVal(p.b[p.i+k])
		if !ok {
			return 0, p.fail("invalid \\u escape")
		}
		v = v<<4 | h
	}
	p.i += 4
	return v, nil
}

// string reads a JSON string; p.b[p.i] is the opening quote.
func (p *jparser) string() (string, error) {
	p.i++
	start := p.i
	// fast path: no escapes
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := p.b[start:p.i]
			if !utf8.Valid(s) {
				return "", p.fail("invalid UTF-8 in string")
			}
			p.i++
			return string(s), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.i++
	}
	buf := append([]byte(nil), p.b[start:p.i]...)
	for {
		if p.i >= len(p.b) {
			return "", p.fail("unterminated string")
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			if !utf8.Valid(buf) {
				return "", p.fail("invalid UTF-8 in string")
			}
			p.i++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("unescaped control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		p.i++
		if p.i >= len(p.b) {
			return "", p.fail("unterminated escape")
		}
		e := p.b[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			u, err := p.u4()
			if err != nil {
				return "", err
			}
			r := rune(u)
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
				if u < 0xDC00 && len(p.b)-p.i >= 6 && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					lo, err := p.u4()
					if err == nil && lo >= 0xDC00 && lo <= 0xDFFF {
						r = utf16.DecodeRune(rune(u), rune(lo))
					} else {
						p.i = save // re-read the next escape on its own
					}
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.fail("invalid escape")
		}
	}
}

func (p *jparser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.fail("nesting too deep")
	}
	return nil
}

func (p *jparser) array() (jvalue, error) {
	if err := p.enter(); err != nil {
		return jvalue{}, err
	}
	p.i++ // '['
	v := jvalue{kind: jArray}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		p.depth--
		return v, nil
	}
	for {
		p.ws()
		e, err := p.value()
		if err != nil {
			return jvalue{}, err
		}
		v.arr = append(v.arr, e)
		p.ws()
		if p.i >= len(p.b) {
			return jvalue{}, p.fail("unterminated array")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			p.depth--
			return v, nil
		default:
			return jvalue{}, p.fail("expected ',' or ']'")
		}
	}
}

func (p *jparser) object() (jvalue, error) {
	if err := p.enter(); err != nil {
		return jvalue{}, err
	}
	p.i++ // '{'
	v := jvalue{kind: jObject}
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		p.depth--
		return v, nil
	}
	for {
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return jvalue{}, p.fail("expected a field name")
		}
		name, err := p.string()
		if err != nil {
			return jvalue{}, err
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return jvalue{}, p.fail("expected ':'")
		}
		p.i++
		p.ws()
		e, err := p.value()
		if err != nil {
			return jvalue{}, err
		}
		v.obj = append(v.obj, jmember{name: name, val: e})
		p.ws()
		if p.i >= len(p.b) {
			return jvalue{}, p.fail("unterminated object")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			p.depth--
			return v, nil
		default:
			return jvalue{}, p.fail("expected ',' or '}'")
		}
	}
}

// int64Value returns an integral number that fits in an int64 (Jackson's canConvertToLong).
func (v *jvalue) int64Value() (int64, bool) {
	if v.kind != jNumber || !v.integral {
		return 0, false
	}
	n, err := strconv.ParseInt(v.str, 10, 64)
	return n, err == nil
}

// int32Value returns an integral number that fits in an int32 (Jackson's canConvertToInt).
func (v *jvalue) int32Value() (int32, bool) {
	if v.kind != jNumber || !v.integral {
		return 0, false
	}
	n, err := strconv.ParseInt(v.str, 10, 32)
	return int32(n), err == nil
}
