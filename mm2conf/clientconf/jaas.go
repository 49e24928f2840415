package clientconf

import (
	"fmt"
	"regexp"
	"strings"
)

// JAASEntry is one login module entry of a sasl.jaas.config value.
type JAASEntry struct {
	Module  string
	Flag    string // upper case: REQUIRED, REQUISITE, SUFFICIENT or OPTIONAL
	Options map[string]string
}

// JAASError is a parse error. Its message never contains option values; it names an option
// only when the name is one a login module defines (a misplaced value could look like a name).
type JAASError struct{ Msg string }

func (e *JAASError) Error() string { return e.Msg }

// ParseJAAS parses a sasl.jaas.config value exactly as Kafka's JaasConfig (2.x to 4.1) does
// with java.io.StreamTokenizer's default syntax plus '-', '_' and '$' as word characters and
// "//" and "/* */" comments. Consequences Java users know from experience hold here too:
//   - an unquoted value must start with a letter, '_' or '$' (then letters, digits, '.', '-',
//     '_', '$' may follow): password=1abc, password=-x or password=a@b are errors unless quoted;
//   - single and double quotes delimit strings with Java escapes (\n, \t, \\, \", octal ...),
//     and a string ends quietly at a newline or at the end of the input;
//   - '/' starts a comment, also a lone one (it comments out the rest of the line);
//   - each entry is `<module> <flag> (<name>=<value>)* ;`.
func ParseJAAS(text string) ([]JAASEntry, error) {
	lx := &jaasLexer{in: []rune(text), peekc: needChar}
	var entries []JAASEntry
	for {
		t := lx.next()
		if t.kind == tokEOF {
			break
		}
		e, err := parseJAASEntry(lx, t, len(entries)+1)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, &JAASError{"login module not specified in JAAS config"}
	}
	return entries, nil
}

func parseJAASEntry(lx *jaasLexer, first jaasToken, n int) (JAASEntry, error) {
	e := JAASEntry{Options: map[string]string{}}
	if !first.hasString() || first.s == "" {
		return e, &JAASError{fmt.Sprintf("login module %d: expected a login module class name", n)}
	}
	e.Module = first.s
	t := lx.next()
	if t.kind == tokEOF {
		return e, &JAASError{fmt.Sprintf("login module %s: control flag not specified", safeModule(e.Module))}
	}
	if !t.hasString() {
		return e, &JAASError{fmt.Sprintf("login module %s: control flag not available", safeModule(e.Module))}
	}
	switch f := strings.ToUpper(t.s); f {
	case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
		e.Flag = f
	default:
		return e, &JAASError{fmt.Sprintf("login module %s: invalid control flag (expected required, requisite, sufficient or optional)", safeModule(e.Module))}
	}
	opt := 0
	for {
		t = lx.next()
		if t.kind == tokEOF || (t.kind == tokChar && t.ch == ';') {
			break
		}
		opt++
		if !t.hasString() {
			return e, &JAASError{fmt.Sprintf("login module %s: option %d: expected an option name (quote values that do not start with a letter)", safeModule(e.Module), opt)}
		}
		name := t.s
		eq := lx.next()
		if eq.kind != tokChar || eq.ch != '=' {
			return e, &JAASError{fmt.Sprintf("login module %s: value not specified for %s (expected name=value)", safeModule(e.Module), safeOption(name, opt))}
		}
		val := lx.next()
		if val.kind == tokEOF || !val.hasString() {
			return e, &JAASError{fmt.Sprintf("login module %s: value not specified for %s (a value that does not start with a letter, '_' or '$' must be quoted)", safeModule(e.Module), safeOption(name, opt))}
		}
		e.Options[name] = val.s
	}
	if t.kind != tokChar || t.ch != ';' {
		return e, &JAASError{fmt.Sprintf("login module %s: entry not terminated by a semicolon", safeModule(e.Module))}
	}
	return e, nil
}

var javaClassName = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*){2,}$`)

// safeModule names a module in an error only if it looks like a Java class name in a package
// (at least two dots), so that a misplaced secret is not echoed.
func safeModule(m string) string {
	if javaClassName.MatchString(m) && len(m) < 200 {
		return m
	}
	return "(unreadable name)"
}

// knownJAASOptions are option names some Kafka login module defines; only these are named in
// parse errors.
var knownJAASOptions = map[string]bool{
	"username": true, "password": true, "tokenauth": true,
	"clientId": true, "clientSecret": true, "scope": true,
	"unsecuredLoginPrincipalClaimName": true, "unsecuredLoginLifetimeSeconds": true, "unsecuredLoginScopeClaimName": true,
	"useKeyTab": true, "keyTab": true, "principal": true, "storeKey": true, "useTicketCache": true, "serviceName": true,
}

func safeOption(name string, n int) string {
	if knownJAASOptions[name] || strings.HasPrefix(name, "extension_") || strings.HasPrefix(name, "unsecuredLogin") || strings.HasPrefix(name, "ssl.") {
		return fmt.Sprintf("option %q", name)
	}
	return fmt.Sprintf("option %d", n)
}

// --- a port of java.io.StreamTokenizer with JaasConfig's syntax table ---

type jaasTokKind int

const (
	tokEOF jaasTokKind = iota
	tokWord
	tokQuoted
	tokChar   // an ordinary character such as ';', '=', '@' or ':'
	tokNumber // a number: StreamTokenizer gives it no string value
)

type jaasToken struct {
	kind jaasTokKind
	s    string
	ch   rune
}

func (t jaasToken) hasString() bool { return t.kind == tokWord || t.kind == tokQuoted }

const needChar = -2

type jaasLexer struct {
	in    []rune
	pos   int
	peekc int
}

func (l *jaasLexer) read() int {
	if l.pos >= len(l.in) {
		return -1
	}
	c := l.in[l.pos]
	l.pos++
	return int(c)
}

type ctype int

const (
	ctOrdinary ctype = iota
	ctWhite
	ctAlpha
	ctQuote
	ctComment
	ctDigit // also a word character inside words
)

// classify gives StreamTokenizer's default character classes (as JaasConfig uses them):
// whitespace 0..32; quotes ' and "; comment '/'; numbers start with a digit, '.' or '-';
// words start with a letter, '_', '$' or a character >= 160 and continue with those, digits,
// '.' and '-'; everything else is an ordinary single-character token.
func classify(c int) ctype {
	switch {
	case c < 0:
		return ctWhite
	case c >= 256:
		return ctAlpha
	case c <= ' ':
		return ctWhite
	case c == '/':
		return ctComment
	case c == '"' || c == '\'':
		return ctQuote
	case c >= '0' && c <= '9', c == '.', c == '-':
		return ctDigit
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '$', c >= 160:
		return ctAlpha
	}
	return ctOrdinary
}

func (l *jaasLexer) next() jaasToken {
	c := l.peekc
	if c == needChar {
		c = l.read()
		if c < 0 {
			return jaasToken{kind: tokEOF}
		}
	} else if c < 0 {
		return jaasToken{kind: tokEOF}
	}
	l.peekc = needChar
	ct := classify(c)
	for ct == ctWhite {
		c = l.read()
		if c < 0 {
			return jaasToken{kind: tokEOF}
		}
		ct = classify(c)
	}
	switch ct {
	case ctDigit:
		if c == '-' {
			c = l.read()
			if c != '.' && (c < '0' || c > '9') {
				l.peekc = c
				return jaasToken{kind: tokChar, ch: '-'}
			}
		}
		seenDot := false
		for {
			if c == '.' && !seenDot {
				seenDot = true
			} else if c < '0' || c > '9' {
				break
			}
			c = l.read()
		}
		l.peekc = c
		return jaasToken{kind: tokNumber}
	case ctAlpha:
		var b []rune
		for {
			b = append(b, rune(c))
			c = l.read()
			if k := classify(c); k != ctAlpha && k != ctDigit {
				break
			}
		}
		l.peekc = c
		return jaasToken{kind: tokWord, s: string(b)}
	case ctQuote:
		q := c
		var b []rune
		d := l.read()
		for d >= 0 && d != q && d != '\n' && d != '\r' {
			if d == '\\' {
				c = l.read()
				first := c
				if c >= '0' && c <= '7' {
					c -= '0'
					c2 := l.read()
					if c2 >= '0' && c2 <= '7' {
						c = c<<3 + (c2 - '0')
						c2 = l.read()
						if c2 >= '0' && c2 <= '7' && first <= '3' {
							c = c<<3 + (c2 - '0')
							d = l.read()
						} else {
							d = c2
						}
					} else {
						d = c2
					}
				} else {
					switch c {
					case 'a':
						c = 0x7
					case 'b':
						c = '\b'
					case 'f':
						c = 0xC
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'v':
						c = 0xB
					case -1:
						c = 0xFFFF // Java stores (char)-1
					}
					d = l.read()
				}
			} else {
				c = d
				d = l.read()
			}
			b = append(b, rune(c))
		}
		if d == q {
			l.peekc = needChar
		} else {
			l.peekc = d
		}
		return jaasToken{kind: tokQuoted, s: string(b), ch: rune(q)}
	case ctComment: // '/', with slashSlashComments and slashStarComments on
		c = l.read()
		switch {
		case c == '*':
			prevc := 0
			for {
				c = l.read()
				if c == '/' && prevc == '*' {
					break
				}
				if c == '\r' {
					c = l.read()
					if c == '\n' {
						c = l.read()
					}
				} else if c == '\n' {
					c = l.read()
				}
				if c < 0 {
					return jaasToken{kind: tokEOF}
				}
				prevc = c
			}
			return l.next()
		case c == '/':
			for {
				c = l.read()
				if c == '\n' || c == '\r' || c < 0 {
					break
				}
			}
			l.peekc = c
			return l.next()
		default:
			// '/' is also a comment character: the rest of the line is a comment. Java
			// discards the character after '/' before looking for the end of the line.
			for {
				c = l.read()
				if c == '\n' || c == '\r' || c < 0 {
					break
				}
			}
			l.peekc = c
			return l.next()
		}
	}
	return jaasToken{kind: tokChar, ch: rune(c)}
}
