package mm2conf

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/dlclark/regexp2"
)

// RegexError explains why a Java regular expression cannot be used.
type RegexError struct {
	Pattern string
	Offset  int // rune offset in Pattern, -1 when unknown
	Msg     string
	Hint    string
}

func (e *RegexError) Error() string {
	p := strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(e.Pattern)
	if e.Offset >= 0 {
		return fmt.Sprintf("regex \"%s\": %s (at offset %d)", p, e.Msg, e.Offset)
	}
	return fmt.Sprintf("regex \"%s\": %s", p, e.Msg)
}

// Java's ASCII-only predefined classes (Pattern without UNICODE_CHARACTER_CLASS).
const (
	javaDigit = `0-9`
	javaWord  = `a-zA-Z_0-9`
	javaSpace = ` \t\n\x0B\f\r`
	javaHoriz = ` \t\xA0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000`
	javaVert  = `\n\x0B\f\r\x85\u2028\u2029`
)

// POSIX classes of java.util.regex (US-ASCII only), as class contents.
var javaPosix = map[string]string{
	"Lower":  `a-z`,
	"Upper":  `A-Z`,
	"ASCII":  `\x00-\x7F`,
	"Alpha":  `a-zA-Z`,
	"Digit":  `0-9`,
	"Alnum":  `a-zA-Z0-9`,
	"Punct":  `!-/:-@\[-` + "`" + `{-~`,
	"Graph":  `!-~`,
	"Print":  ` -~`,
	"Blank":  ` \t`,
	"Cntrl":  `\x00-\x1F\x7F`,
	"XDigit": `0-9a-fA-F`,
	"Space":  ` \t\n\x0B\f\r`,
}

// Unicode general categories understood by both Java and the engine.
var generalCategories = map[string]bool{
	"L": true, "Lu": true, "Ll": true, "Lt": true, "Lm": true, "Lo": true,
	"M": true, "Mn": true, "Mc": true, "Me": true,
	"N": true, "Nd": true, "Nl": true, "No": true,
	"P": true, "Pc": true, "Pd": true, "Ps": true, "Pe": true, "Pi": true, "Pf": true, "Po": true,
	"S": true, "Sm": true, "Sc": true, "Sk": true, "So": true,
	"Z": true, "Zs": true, "Zl": true, "Zp": true,
	"C": true, "Cc": true, "Cf": true, "Cs": true, "Co": true, "Cn": true,
}

// translateJavaRegex rewrites a java.util.regex pattern into the dialect of
// github.com/dlclark/regexp2 (.NET syntax) with the same meaning, or fails
// with a clear error for constructs that differ and cannot be rewritten.
//
// Handled: \Q...\E quoting, ASCII-only \d \w \s (and negations outside
// classes), \h \v \R, POSIX \p{Alpha}-style classes, \x{...}, octal \0nnn,
// Java's "illegal repetition" for a stray '{', ']' first in a class.
// Rejected: possessive quantifiers, class intersection (&&) and nested
// classes, \p{javaXxx}/script/block classes, \X \N{} \b{g}, the inline flags
// d u U c, and .NET-only syntax Java rejects ((?'n'..), (?#..), (?(..)..)).
// Known residual difference: '.' excludes only '\n' (Java also excludes \r,
// \u0085, \u2028, \u2029), and (?i) folds non-ASCII letters too; neither can
// occur in a Kafka topic name.
func translateJavaRegex(p string) (string, error) {
	t := &reTranslator{in: []rune(p), src: p, foldsI: inlineIFlag.MatchString(p)}
	if err := t.run(); err != nil {
		return "", err
	}
	return t.out.String(), nil
}

type reTranslator struct {
	in    []rune
	src   string
	i     int
	out   strings.Builder
	depth int
	// foldsI: the pattern turns on CASE_INSENSITIVE somewhere. Java then
	// folds ASCII letters only, so non-ASCII letters are kept case-sensitive.
	foldsI bool
}

var inlineIFlag = regexp.MustCompile(`\(\?[a-zA-Z]*i[a-zA-Z-]*[:)]`)

// hasCase reports whether r is a non-ASCII letter with other case forms.
func hasCase(r rune) bool { return r > 0x7f && unicode.SimpleFold(r) != r }

func (t *reTranslator) fail(off int, msg, hint string) error {
	return &RegexError{Pattern: t.src, Offset: off, Msg: msg, Hint: hint}
}

func (t *reTranslator) peek(k int) rune {
	if t.i+k < len(t.in) {
		return t.in[t.i+k]
	}
	return -1
}

func (t *reTranslator) run() error {
	canQuantify := false // a quantifier here would apply to something
	for t.i < len(t.in) {
		c := t.in[t.i]
		switch c {
		case '\\':
			q, err := t.escape(false)
			if err != nil {
				return err
			}
			canQuantify = q
		case '[':
			if err := t.class(); err != nil {
				return err
			}
			canQuantify = true
		case '(':
			if err := t.group(); err != nil {
				return err
			}
			canQuantify = false
		case ')':
			t.depth--
			if t.depth < 0 {
				return t.fail(t.i, "unmatched closing ')'", "")
			}
			t.out.WriteRune(c)
			t.i++
			canQuantify = true
		case '*', '+', '?':
			if !canQuantify {
				return t.fail(t.i, fmt.Sprintf("dangling meta character '%c'", c), "escape it as \\"+string(c)+" to match it literally")
			}
			t.out.WriteRune(c)
			t.i++
			if err := t.quantSuffix(); err != nil {
				return err
			}
			canQuantify = false
		case '{':
			n := t.countedQuantifier()
			if n == 0 {
				return t.fail(t.i, "illegal repetition: '{' does not start a {n}, {n,} or {n,m} quantifier", `escape it as \{ to match it literally; note that MM2 splits lists at commas, so "a{1,3}" becomes "a{1" and "3}"`)
			}
			if !canQuantify {
				return t.fail(t.i, "dangling quantifier", "")
			}
			t.out.WriteString(string(t.in[t.i : t.i+n]))
			t.i += n
			if err := t.quantSuffix(); err != nil {
				return err
			}
			canQuantify = false
		case '^', '$', '|':
			t.out.WriteRune(c)
			t.i++
			canQuantify = c == '$'
			if c == '|' || c == '^' {
				canQuantify = false
			}
		default:
			if t.foldsI && hasCase(c) {
				t.out.WriteString("(?-i:" + string(c) + ")")
			} else {
				t.out.WriteRune(c)
			}
			t.i++
			canQuantify = true
		}
	}
	if t.depth > 0 {
		return t.fail(len(t.in), "unclosed group: missing ')'", "")
	}
	return nil
}

// quantSuffix handles what may follow a quantifier: '?' (reluctant) is kept,
// '+' (possessive) is rejected.
func (t *reTranslator) quantSuffix() error {
	switch t.peek(0) {
	case '?':
		t.out.WriteRune('?')
		t.i++
	case '+':
		return t.fail(t.i, "possessive quantifier (X*+, X++, X?+, X{n}+) is not supported by kmm's regex engine",
			"rewrite X*+ as the atomic group (?>X*), which means the same")
	}
	return nil
}

// countedQuantifier returns the length of {n}, {n,} or {n,m} at t.i, or 0.
func (t *reTranslator) countedQuantifier() int {
	j := t.i + 1
	digits := func() int {
		s := j
		for j < len(t.in) && t.in[j] >= '0' && t.in[j] <= '9' {
			j++
		}
		return j - s
	}
	if digits() == 0 {
		return 0
	}
	if j < len(t.in) && t.in[j] == ',' {
		j++
		digits()
	}
	if j < len(t.in) && t.in[j] == '}' {
		return j + 1 - t.i
	}
	return 0
}

func isNameStart(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
func isNameChar(r rune) bool  { return isNameStart(r) || r >= '0' && r <= '9' }

func (t *reTranslator) group() error {
	start := t.i
	t.i++ // '('
	t.depth++
	if t.peek(0) != '?' {
		t.out.WriteRune('(')
		return nil
	}
	t.i++ // '?'
	c := t.peek(0)
	switch c {
	case ':', '=', '!', '>':
		t.out.WriteString("(?" + string(c))
		t.i++
		return nil
	case '<':
		n := t.peek(1)
		if n == '=' || n == '!' {
			t.out.WriteString("(?<" + string(n))
			t.i += 2
			return nil
		}
		j := t.i + 1
		if j >= len(t.in) || !isNameStart(t.in[j]) {
			return t.fail(j, "capturing group name does not start with a Latin letter", "Java group names are [a-zA-Z][a-zA-Z0-9]*")
		}
		for j < len(t.in) && isNameChar(t.in[j]) {
			j++
		}
		if j >= len(t.in) || t.in[j] != '>' {
			return t.fail(j, "named capturing group is missing trailing '>'", "")
		}
		t.out.WriteString("(?" + string(t.in[t.i:j+1]))
		t.i = j + 1
		return nil
	case '#':
		return t.fail(start, "(?#...) comments are not Java regex syntax (Java: unknown inline modifier)", "remove the comment")
	case '\'', '(', 'P':
		return t.fail(start, "unknown inline modifier (this is .NET/Python syntax, not Java)", "")
	}
	// Inline flags: (?idmsuxU-idmsuxU) or (?flags:X)
	j := t.i
	var flags strings.Builder
	for j < len(t.in) {
		f := t.in[j]
		if f == ')' || f == ':' {
			break
		}
		switch f {
		case 'i', 'm', 's', 'x', '-':
			flags.WriteRune(f)
		case 'd', 'u', 'U', 'c':
			return t.fail(j, fmt.Sprintf("inline flag '%c' is not supported by kmm's regex engine", f),
				"flags d (UNIX_LINES), u (UNICODE_CASE), U (UNICODE_CHARACTER_CLASS) and c (CANON_EQ) have no equivalent; remove it")
		default:
			return t.fail(j, "unknown inline modifier", "")
		}
		j++
	}
	if j >= len(t.in) {
		return t.fail(start, "unclosed group", "")
	}
	if t.in[j] == ')' {
		t.depth-- // (?i) is not a group
	}
	t.out.WriteString("(?" + flags.String() + string(t.in[j]))
	t.i = j + 1
	return nil
}

// hexVal parses hex digits.
func hexVal(rs []rune) (int, bool) {
	if len(rs) == 0 {
		return 0, false
	}
	v := 0
	for _, r := range rs {
		switch {
		case r >= '0' && r <= '9':
			v = v*16 + int(r-'0')
		case r >= 'a' && r <= 'f':
			v = v*16 + int(r-'a') + 10
		case r >= 'A' && r <= 'F':
			v = v*16 + int(r-'A') + 10
		default:
			return 0, false
		}
		if v > 0x10FFFF {
			return 0, false
		}
	}
	return v, true
}

// literal writes r so that it matches itself, inside or outside a class.
func literal(b *strings.Builder, r rune) {
	switch {
	case r < 0x20 || r == 0x7f:
		fmt.Fprintf(b, `\x%02X`, r)
	case r <= 0xFFFF && r >= 0x80 && (r >= 0xD800 && r <= 0xDFFF):
		fmt.Fprintf(b, `\u%04X`, r)
	case strings.ContainsRune(`\^$.|?*+()[]{}-#& `, r):
		b.WriteRune('\\')
		b.WriteRune(r)
	default:
		b.WriteRune(r)
	}
}

// escape translates the escape at t.i ('\\'). It reports whether the result
// can take a quantifier.
func (t *reTranslator) escape(inClass bool) (bool, error) {
	start := t.i
	t.i++
	if t.i >= len(t.in) {
		return false, t.fail(start, "pattern ends with a lone backslash", `write \\ to match a backslash`)
	}
	c := t.in[t.i]
	t.i++
	b := &t.out
	neg := func(set string) {
		if inClass {
			b.WriteString(set)
		} else {
			b.WriteString("[^" + set + "]")
		}
	}
	pos := func(set string) {
		if inClass {
			b.WriteString(set)
		} else {
			b.WriteString("[" + set + "]")
		}
	}
	switch c {
	case 'd':
		pos(javaDigit)
	case 'w':
		pos(javaWord)
	case 's':
		pos(javaSpace)
	case 'h':
		pos(javaHoriz)
	case 'D', 'W', 'S', 'H', 'V':
		if inClass {
			if c == 'H' || c == 'V' {
				return false, t.fail(start, fmt.Sprintf(`\%c inside a character class is not supported by kmm's regex engine`, c), "")
			}
			// .NET's \D \W \S are Unicode-aware; they differ from Java only
			// for non-ASCII characters, which Kafka topic names cannot hold.
			b.WriteRune('\\')
			b.WriteRune(c)
			return true, nil
		}
		switch c {
		case 'D':
			neg(javaDigit)
		case 'W':
			neg(javaWord)
		case 'S':
			neg(javaSpace)
		case 'H':
			neg(javaHoriz)
		case 'V':
			neg(javaVert)
		}
	case 'v':
		pos(javaVert)
	case 'R':
		if inClass {
			return false, t.fail(start, `\R is not allowed in a character class`, "")
		}
		b.WriteString(`(?:\r\n|[` + javaVert + `])`)
	case 'X', 'N':
		return false, t.fail(start, fmt.Sprintf(`\%c is not supported by kmm's regex engine`, c), "")
	case 'b':
		if t.peek(0) == '{' {
			return false, t.fail(start, `\b{g} (grapheme boundary) is not supported by kmm's regex engine`, "")
		}
		if inClass {
			return false, t.fail(start, `\b inside a character class is not valid`, "")
		}
		b.WriteString(`\b`)
		return false, nil
	case 'B', 'A', 'G', 'Z', 'z':
		if inClass {
			return false, t.fail(start, fmt.Sprintf(`\%c inside a character class is not valid`, c), "")
		}
		b.WriteRune('\\')
		b.WriteRune(c)
		return false, nil
	case 't', 'n', 'r', 'f', 'a', 'e':
		b.WriteRune('\\')
		b.WriteRune(c)
	case 'c':
		if t.i >= len(t.in) {
			return false, t.fail(start, `illegal control escape sequence`, "")
		}
		literal(b, t.in[t.i]^64)
		t.i++
	case '0':
		j := t.i
		for j < len(t.in) && j-t.i < 3 && t.in[j] >= '0' && t.in[j] <= '7' {
			j++
		}
		if j == t.i {
			return false, t.fail(start, "illegal octal escape sequence", `Java needs \0n, \0nn or \0mnn`)
		}
		if j-t.i == 3 && t.in[t.i] > '3' {
			j--
		}
		v := 0
		for _, r := range t.in[t.i:j] {
			v = v*8 + int(r-'0')
		}
		t.i = j
		literal(b, rune(v))
	case 'x':
		if t.peek(0) == '{' {
			j := t.i + 1
			for j < len(t.in) && t.in[j] != '}' {
				j++
			}
			v, ok := hexVal(t.in[t.i+1 : min(j, len(t.in))])
			if j >= len(t.in) || !ok {
				return false, t.fail(start, "illegal hexadecimal escape sequence", "")
			}
			t.i = j + 1
			literal(b, rune(v))
			break
		}
		if t.i+2 > len(t.in) {
			return false, t.fail(start, "illegal hexadecimal escape sequence", "")
		}
		v, ok := hexVal(t.in[t.i : t.i+2])
		if !ok {
			return false, t.fail(start, "illegal hexadecimal escape sequence", "")
		}
		t.i += 2
		literal(b, rune(v))
	case 'u':
		if t.i+4 > len(t.in) {
			return false, t.fail(start, "illegal Unicode escape sequence", "")
		}
		v, ok := hexVal(t.in[t.i : t.i+4])
		if !ok {
			return false, t.fail(start, "illegal Unicode escape sequence", "")
		}
		t.i += 4
		r := rune(v)
		if utf16.IsSurrogate(r) && t.peek(0) == '\\' && t.peek(1) == 'u' && t.i+6 <= len(t.in) {
			if lo, ok := hexVal(t.in[t.i+2 : t.i+6]); ok {
				if pair := utf16.DecodeRune(r, rune(lo)); pair != 0xFFFD {
					r = pair
					t.i += 6
				}
			}
		}
		literal(b, r)
	case 'p', 'P':
		return true, t.property(start, c == 'P', inClass)
	case 'Q':
		end := strings.Index(string(t.in[t.i:]), `\E`)
		var quoted []rune
		if end < 0 {
			quoted = t.in[t.i:]
			t.i = len(t.in)
		} else {
			quoted = []rune(string(t.in[t.i:])[:end])
			t.i += len(quoted) + 2
		}
		if len(quoted) == 0 {
			return false, nil
		}
		if !inClass && len(quoted) > 1 {
			b.WriteString("(?:")
		}
		for _, r := range quoted {
			literal(b, r)
		}
		if !inClass && len(quoted) > 1 {
			b.WriteString(")")
		}
	case 'k':
		if t.peek(0) != '<' {
			return false, t.fail(start, `\k is not followed by '<' for named capturing group`, "")
		}
		j := t.i
		for j < len(t.in) && t.in[j] != '>' {
			j++
		}
		if j >= len(t.in) {
			return false, t.fail(start, "named capturing group is missing trailing '>'", "")
		}
		b.WriteString(`\k` + string(t.in[t.i:j+1]))
		t.i = j + 1
	default:
		switch {
		case c >= '1' && c <= '9':
			if inClass {
				return false, t.fail(start, "back reference inside a character class", "")
			}
			b.WriteRune('\\')
			b.WriteRune(c)
			for t.i < len(t.in) && t.in[t.i] >= '0' && t.in[t.i] <= '9' {
				b.WriteRune(t.in[t.i])
				t.i++
			}
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return false, t.fail(start, "illegal/unsupported escape sequence \\"+string(c), "")
		default:
			literal(b, c)
		}
	}
	return true, nil
}

func (t *reTranslator) property(start int, negated, inClass bool) error {
	var name string
	if t.peek(0) == '{' {
		j := t.i + 1
		for j < len(t.in) && t.in[j] != '}' {
			j++
		}
		if j >= len(t.in) {
			return t.fail(start, "unclosed character family", "")
		}
		name = string(t.in[t.i+1 : j])
		t.i = j + 1
	} else {
		if t.i >= len(t.in) {
			return t.fail(start, "illegal character family", "")
		}
		name = string(t.in[t.i])
		t.i++
	}
	b := &t.out
	if set, ok := javaPosix[name]; ok {
		switch {
		case !negated && inClass:
			b.WriteString(set)
		case !negated:
			b.WriteString("[" + set + "]")
		case !inClass:
			b.WriteString("[^" + set + "]")
		default:
			return t.fail(start, fmt.Sprintf(`\P{%s} inside a character class is not supported by kmm's regex engine`, name), "")
		}
		return nil
	}
	cat := strings.TrimPrefix(strings.TrimPrefix(name, "general_category="), "gc=")
	if strings.HasPrefix(cat, "Is") && generalCategories[cat[2:]] {
		cat = cat[2:]
	}
	if generalCategories[cat] {
		if negated {
			b.WriteString(`\P{` + cat + `}`)
		} else {
			b.WriteString(`\p{` + cat + `}`)
		}
		return nil
	}
	hint := "only Unicode general categories (\\p{L}, \\p{Lu}, \\p{Nd}, ...) and the POSIX classes (\\p{Alpha}, \\p{Digit}, ...) are supported"
	if strings.HasPrefix(name, "java") {
		return t.fail(start, fmt.Sprintf(`Java-specific character class \p{%s} is not supported by kmm's regex engine`, name), hint)
	}
	return t.fail(start, fmt.Sprintf(`character class \p{%s} (script, block or binary property) is not supported by kmm's regex engine`, name), hint)
}

func (t *reTranslator) class() error {
	start := t.i
	t.i++
	t.out.WriteRune('[')
	if t.peek(0) == '^' {
		t.out.WriteRune('^')
		t.i++
	}
	first := true
	for {
		if t.i >= len(t.in) {
			return t.fail(start, "unclosed character class", `escape '[' as \[ to match it literally`)
		}
		c := t.in[t.i]
		switch {
		case c == ']' && first:
			t.out.WriteString(`\]`)
			t.i++
		case c == ']':
			t.out.WriteRune(']')
			t.i++
			return nil
		case c == '[':
			return t.fail(t.i, "nested character class (Java union [a[b]]) is not supported by kmm's regex engine", "list the members in one class instead")
		case c == '&' && t.peek(1) == '&':
			return t.fail(t.i, "character class intersection (&&) is not supported by kmm's regex engine", "spell out the resulting set, e.g. [a-z&&[^e]] as [a-df-z]")
		case c == '\\':
			if _, err := t.escape(true); err != nil {
				return err
			}
		default:
			if t.foldsI && hasCase(c) {
				return t.fail(t.i, "case-insensitive matching of a non-ASCII letter in a character class is not supported by kmm's regex engine", "Java's (?i) folds ASCII letters only")
			}
			if c == '-' && t.peek(1) == '[' {
				return t.fail(t.i, "nested character class is not supported by kmm's regex engine", "")
			}
			t.out.WriteRune(c)
			t.i++
		}
		first = false
	}
}

// compileJavaRegex translates and compiles a Java regex so that a match
// means Matcher.matches() (the whole input).
func compileJavaRegex(p string) (*regexp2.Regexp, error) {
	tr, err := translateJavaRegex(p)
	if err != nil {
		return nil, err
	}
	re, err := regexp2.Compile(`\A(?:`+tr+`)\z`, regexp2.None)
	if err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, " in `"); i > 0 {
			msg = msg[:i]
		}
		return nil, &RegexError{Pattern: p, Offset: -1, Msg: "invalid regex, or a Java construct not supported by kmm's regex engine: " + msg}
	}
	re.MatchTimeout = regexTimeout
	return re, nil
}
