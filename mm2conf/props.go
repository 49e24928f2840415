package mm2conf

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Pos is a position in a configuration source: a file and a 1-based line
// number. The zero Pos means "no position" (a default value).
type Pos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// String renders the position as "file:line", "file" or "".
func (p Pos) String() string {
	switch {
	case p.File == "" && p.Line == 0:
		return ""
	case p.Line == 0:
		return p.File
	default:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
}

// IsZero reports whether p is the zero position.
func (p Pos) IsZero() bool { return p.File == "" && p.Line == 0 }

// Less orders positions by file name, then line.
func (p Pos) Less(q Pos) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	return p.Line < q.Line
}

// Entry is one key/value pair exactly as java.util.Properties.load
// produced it, with the line where its logical line starts.
type Entry struct {
	Key   string
	Value string
	Pos   Pos
	// LostEscape is the first backslash sequence of the value whose
	// backslash the properties format dropped (e.g. `\.` read as "."), or "".
	LostEscape string
}

// Properties is a parsed properties file. Entries keeps every assignment in
// file order, duplicates included; lookups see the last one (Java's
// Hashtable.put semantics).
type Properties struct {
	File    string
	Entries []Entry
	last    map[string]int
}

// NewProperties returns an empty set bound to a file name.
func NewProperties(file string) *Properties {
	return &Properties{File: file, last: map[string]int{}}
}

// Set appends an assignment (last wins).
func (p *Properties) Set(e Entry) {
	if p.last == nil {
		p.last = map[string]int{}
	}
	p.last[e.Key] = len(p.Entries)
	p.Entries = append(p.Entries, e)
}

// Get returns the effective (last) entry for key.
func (p *Properties) Get(key string) (Entry, bool) {
	i, ok := p.last[key]
	if !ok {
		return Entry{}, false
	}
	return p.Entries[i], true
}

// Len is the number of distinct keys.
func (p *Properties) Len() int { return len(p.last) }

// Effective returns the effective entries (one per key), sorted by key.
func (p *Properties) Effective() []Entry {
	out := make([]Entry, 0, len(p.last))
	for _, i := range p.last {
		out = append(out, p.Entries[i])
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Key < out[b].Key })
	return out
}

// Map returns key → value of the effective entries.
func (p *Properties) Map() map[string]string {
	m := make(map[string]string, len(p.last))
	for k, i := range p.last {
		m[k] = p.Entries[i].Value
	}
	return m
}

// SyntaxError is a properties-file error at a position, worded like the
// IllegalArgumentException that java.util.Properties.load throws.
type SyntaxError struct {
	Pos Pos
	Msg string
}

func (e *SyntaxError) Error() string { return e.Pos.String() + ": " + e.Msg }

// Encoding selects how bytes become characters.
type Encoding int

const (
	// Latin1 is what Properties.load(InputStream) uses, and so what MM2
	// uses for its main file: every byte is one character U+0000..U+00FF.
	Latin1 Encoding = iota
	// UTF8 is what Properties.load(Reader) with a UTF-8 reader uses, as
	// Kafka's FileConfigProvider does. Malformed input is an error.
	UTF8
)

// ParseProperties parses data with java.util.Properties.load semantics.
// Duplicate keys keep the last value and add a warning naming both lines.
// The only syntax error Java reports, a malformed \uXXXX escape, is returned
// as a *SyntaxError with the line of the offending logical line.
func ParseProperties(file string, data []byte, enc Encoding) (*Properties, []Diagnostic, error) {
	in, err := decodeInput(file, data, enc)
	if err != nil {
		return nil, nil, err
	}
	lines := lineTable(in)
	p := NewProperties(file)
	var diags []Diagnostic
	lr := lineReader{in: in}
	for {
		line, start, ok := lr.readLine()
		if !ok {
			break
		}
		pos := Pos{File: file, Line: 1}
		if start >= 0 {
			pos.Line = lines[start]
		} else if lr.off > 0 {
			pos.Line = lines[lr.off-1]
		}
		key, value, lost, msg := splitLogicalLine(line)
		if msg != "" {
			return nil, diags, &SyntaxError{Pos: pos, Msg: msg}
		}
		if prev, dup := p.Get(key); dup {
			diags = append(diags, Diagnostic{
				Severity: SeverityWarning, Code: "duplicate-key", Pos: pos, Key: key,
				Msg:  fmt.Sprintf("duplicate key %q: this line overrides line %d (the last one wins, as in Java)", key, prev.Pos.Line),
				Hint: fmt.Sprintf("remove one of the two assignments (lines %d and %d)", prev.Pos.Line, pos.Line),
			})
		}
		p.Set(Entry{Key: key, Value: value, Pos: pos, LostEscape: lost})
	}
	return p, diags, nil
}

func decodeInput(file string, data []byte, enc Encoding) ([]rune, error) {
	if enc == Latin1 {
		in := make([]rune, len(data))
		for i, b := range data {
			in[i] = rune(b)
		}
		return in, nil
	}
	in := make([]rune, 0, len(data))
	line := 1
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return nil, &SyntaxError{Pos: Pos{File: file, Line: line}, Msg: "malformed UTF-8 input (Java's UTF-8 reader rejects the whole file)"}
		}
		if r == '\n' {
			line++
		}
		in = append(in, r)
		i += n
	}
	return in, nil
}

// lineTable maps each character index to its 1-based natural line. Line
// terminators are \n, \r and \r\n, as for Java's LineReader.
func lineTable(in []rune) []int {
	t := make([]int, len(in))
	line := 1
	for i, c := range in {
		t[i] = line
		if c == '\n' || (c == '\r' && (i+1 >= len(in) || in[i+1] != '\n')) {
			line++
		}
	}
	return t
}

type lineReader struct {
	in  []rune
	off int
	buf []rune
}

// readLine returns the next logical line (continuations joined, comments
// and blank lines skipped) and the index of its first character. It
// mirrors the state machine of java.util.Properties.LineReader.
func (lr *lineReader) readLine() ([]rune, int, bool) {
	buf := lr.buf[:0]
	defer func() { lr.buf = buf[:0] }()
	skipWS, appendedLineBegin, precedingBackslash := true, false, false
	start := -1
	for {
		if lr.off >= len(lr.in) {
			if len(buf) == 0 {
				return nil, -1, false
			}
			if precedingBackslash {
				buf = buf[:len(buf)-1]
			}
			return buf, start, true
		}
		c := lr.in[lr.off]
		lr.off++
		if skipWS {
			if c == ' ' || c == '\t' || c == '\f' {
				continue
			}
			if !appendedLineBegin && (c == '\r' || c == '\n') {
				continue
			}
			skipWS, appendedLineBegin = false, false
		}
		if len(buf) == 0 && (c == '#' || c == '!') {
			for lr.off < len(lr.in) {
				b := lr.in[lr.off]
				lr.off++
				if b == '\r' || b == '\n' {
					break
				}
			}
			start = -1
			skipWS = true
			continue
		}
		if c != '\n' && c != '\r' {
			if start < 0 {
				start = lr.off - 1
			}
			buf = append(buf, c)
			precedingBackslash = c == '\\' && !precedingBackslash
			continue
		}
		// End of a natural line.
		if len(buf) == 0 {
			skipWS = true
			continue
		}
		if lr.off >= len(lr.in) {
			if precedingBackslash {
				buf = buf[:len(buf)-1]
			}
			return buf, start, true
		}
		if !precedingBackslash {
			return buf, start, true
		}
		buf = buf[:len(buf)-1]
		skipWS, appendedLineBegin, precedingBackslash = true, true, false
		if c == '\r' && lr.off < len(lr.in) && lr.in[lr.off] == '\n' {
			lr.off++
		}
	}
}

// splitLogicalLine splits a logical line into key and value as
// Properties.load does and unescapes both. A non-empty msg is a syntax error.
func splitLogicalLine(line []rune) (key, value, lost, msg string) {
	limit := len(line)
	keyLen, valueStart := 0, limit
	hasSep, pb := false, false
	for keyLen < limit {
		c := line[keyLen]
		if (c == '=' || c == ':') && !pb {
			valueStart = keyLen + 1
			hasSep = true
			break
		} else if (c == ' ' || c == '\t' || c == '\f') && !pb {
			valueStart = keyLen + 1
			break
		}
		if c == '\\' {
			pb = !pb
		} else {
			pb = false
		}
		keyLen++
	}
	for valueStart < limit {
		c := line[valueStart]
		if c != ' ' && c != '\t' && c != '\f' {
			if !hasSep && (c == '=' || c == ':') {
				hasSep = true
			} else {
				break
			}
		}
		valueStart++
	}
	key, _, msg = loadConvert(line[:keyLen])
	if msg != "" {
		return "", "", "", msg
	}
	value, lost, msg = loadConvert(line[valueStart:limit])
	return key, value, lost, msg
}

const malformedU = `Malformed \uxxxx encoding.`

// loadConvert processes escapes like Properties.loadConvert. The result is
// built as UTF-16 code units, as Java does, so that escaped surrogate pairs
// combine; a lone surrogate becomes U+FFFD.
func loadConvert(in []rune) (string, string, string) {
	if !containsRune(in, '\\') {
		return string(in), "", ""
	}
	lost := ""
	out := make([]uint16, 0, len(in))
	for i := 0; i < len(in); {
		c := in[i]
		i++
		if c != '\\' {
			out = appendUTF16(out, c)
			continue
		}
		if i >= len(in) {
			break // cannot happen after readLine; Java would not get here either
		}
		c = in[i]
		i++
		if c == 'u' {
			if i > len(in)-4 {
				return "", "", malformedU
			}
			v := 0
			for k := 0; k < 4; k++ {
				d := in[i]
				i++
				switch {
				case d >= '0' && d <= '9':
					v = v<<4 + int(d-'0')
				case d >= 'a' && d <= 'f':
					v = v<<4 + 10 + int(d-'a')
				case d >= 'A' && d <= 'F':
					v = v<<4 + 10 + int(d-'A')
				default:
					return "", "", malformedU
				}
			}
			out = append(out, uint16(v))
			continue
		}
		switch c {
		case 't':
			c = '\t'
		case 'r':
			c = '\r'
		case 'n':
			c = '\n'
		case 'f':
			c = '\f'
		case '\\', '=', ':', '#', '!', ' ', '\t', '\f':
		default:
			if lost == "" {
				lost = `\` + string(c)
			}
		}
		out = appendUTF16(out, c)
	}
	return string(utf16.Decode(out)), lost, ""
}

func containsRune(in []rune, r rune) bool {
	for _, c := range in {
		if c == r {
			return true
		}
	}
	return false
}

func appendUTF16(out []uint16, r rune) []uint16 {
	if r >= 0x10000 {
		a, b := utf16.EncodeRune(r)
		return append(out, uint16(a), uint16(b))
	}
	return append(out, uint16(r))
}

// SerializeProperties writes entries so that ParseProperties (Latin1) reads
// back exactly the same keys and values. Like Properties.store, it escapes
// separators, comment characters, backslashes and whitespace, and writes
// every character outside printable ASCII as \uXXXX.
func SerializeProperties(entries []Entry) []byte {
	var b strings.Builder
	for _, e := range entries {
		saveConvert(&b, e.Key, true)
		b.WriteByte('=')
		saveConvert(&b, e.Value, false)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func saveConvert(b *strings.Builder, s string, isKey bool) {
	first := true
	for _, r := range s {
		switch {
		case r == ' ':
			if isKey || first {
				b.WriteString(`\ `)
			} else {
				b.WriteByte(' ')
			}
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '=' || r == ':' || r == '#' || r == '!' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			if r == utf8.RuneError {
				r = 0xFFFD
			}
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(b, `\u%04X`, u)
			}
		default:
			b.WriteRune(r)
		}
		first = false
	}
}
