package clientconf

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Role is the Kafka client a set of settings is for.
type Role string

// The three client roles MM2 configures per cluster.
const (
	Consumer Role = "consumer"
	Producer Role = "producer"
	Admin    Role = "admin"
)

// Prop is one resolved setting: its value as written (not yet trimmed) and where it came from.
type Prop struct {
	Value string
	Pos   string // "file:line", or "default" for a value the caller supplied as a default
}

// Severity of a Diag.
type Severity int

// Severities. An Error means the configuration cannot be honoured and kmm must not start.
const (
	Warning Severity = iota
	Error
)

func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// Diag is one finding about one Java key. Msg and Hint never contain a secret value.
type Diag struct {
	Severity Severity
	Pos      string // position of Key ("file:line" or "default"); "" if the key is absent
	Key      string // the Java key the finding is about
	Msg      string
	Hint     string // optional: what to do about it
}

func (d Diag) String() string {
	var b strings.Builder
	if d.Pos != "" {
		b.WriteString(d.Pos)
		b.WriteString(": ")
	}
	b.WriteString(d.Severity.String())
	b.WriteString(": ")
	if d.Key != "" {
		b.WriteString(d.Key)
		b.WriteString(": ")
	}
	b.WriteString(d.Msg)
	if d.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(d.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Result of Translate.
type Result struct {
	// Config holds librdkafka properties, ready for kafka.ConfigMap.
	Config map[string]string
	// Secret marks the Config keys whose values are secrets; never print those values.
	Secret map[string]bool
	// Origin maps each Config key to the Java key(s) it came from, comma-separated, or to
	// "(Java default)" when kmm set it to reproduce the Java client's default.
	Origin map[string]string
	// Diags are warnings and errors, ordered by position.
	Diags []Diag
	// Ignored lists Java keys that were dropped without a diagnostic, with the reason
	// (for `config explain`): keys of another role, settings equal to the Java default that
	// have no librdkafka meaning, ssl.*/sasl.* keys the security protocol does not use.
	Ignored map[string]string
}

// HasErrors reports whether any Diag is an Error.
func (r Result) HasErrors() bool {
	for _, d := range r.Diags {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Options for Translate.
type Options struct {
	// ReadFile reads key stores and trust stores. nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
}

// Translate turns the Java client settings of one cluster and one role into librdkafka
// properties. It never fails outright: problems are Diags with Severity Error.
func Translate(props map[string]Prop, role Role, opts Options) Result {
	s := newState(props, role, opts)
	s.run()
	s.finish()
	return *s.res
}

// state carries one translation.
type state struct {
	role  Role
	read  func(string) ([]byte, error)
	props map[string]Prop // values trimmed
	raw   map[string]Prop
	res   *Result
	order map[string]int // diag ordering of keys

	proto    string // upper-case security protocol
	mech     string // upper-case SASL mechanism when SASL is used
	useSSL   bool
	useSASL  bool
	explicit map[string]bool // keys present in props (not defaults injected by us)
}

func newState(props map[string]Prop, role Role, opts Options) *state {
	s := &state{
		role:     role,
		read:     opts.ReadFile,
		props:    make(map[string]Prop, len(props)),
		raw:      props,
		explicit: make(map[string]bool, len(props)),
		res: &Result{
			Config:  map[string]string{},
			Secret:  map[string]bool{},
			Origin:  map[string]string{},
			Ignored: map[string]string{},
		},
	}
	if s.read == nil {
		s.read = os.ReadFile
	}
	for k, p := range props {
		// Java's ConfigDef trims every typed value, passwords included.
		s.props[k] = Prop{Value: strings.TrimSpace(p.Value), Pos: p.Pos}
		s.explicit[k] = true
	}
	return s
}

func (s *state) get(key string) (Prop, bool) {
	p, ok := s.props[key]
	return p, ok
}

func (s *state) val(key string) string { return s.props[key].Value }

func (s *state) has(key string) bool {
	_, ok := s.props[key]
	return ok
}

// present returns those of keys that are set.
func (s *state) present(keys ...string) []string {
	var out []string
	for _, k := range keys {
		if s.has(k) {
			out = append(out, k)
		}
	}
	return out
}

func (s *state) pos(key string) string {
	if p, ok := s.props[key]; ok {
		return p.Pos
	}
	return ""
}

func (s *state) diag(sev Severity, key, msg, hint string) {
	s.res.Diags = append(s.res.Diags, Diag{Severity: sev, Pos: s.pos(key), Key: key, Msg: msg, Hint: hint})
}

func (s *state) warnf(key, hint, format string, args ...any) {
	s.diag(Warning, key, fmt.Sprintf(format, args...), hint)
}

func (s *state) errorf(key, hint, format string, args ...any) {
	s.diag(Error, key, fmt.Sprintf(format, args...), hint)
}

func (s *state) ignore(key, reason string) {
	if s.has(key) {
		s.res.Ignored[key] = reason
	}
}

// set writes a librdkafka property and records the Java key(s) it came from.
func (s *state) set(rdKey, value string, javaKeys ...string) {
	s.res.Config[rdKey] = value
	if len(javaKeys) > 0 {
		s.res.Origin[rdKey] = strings.Join(javaKeys, ", ")
	}
}

// setSecret is set for secret values.
func (s *state) setSecret(rdKey, value string, javaKeys ...string) {
	s.set(rdKey, value, javaKeys...)
	s.res.Secret[rdKey] = true
}

func (s *state) setDefault(rdKey, value string) {
	if _, ok := s.res.Config[rdKey]; ok {
		return
	}
	s.res.Config[rdKey] = value
	s.res.Origin[rdKey] = OriginJavaDefault
}

// OriginJavaDefault is the Origin of properties kmm sets to reproduce a Java client default.
const OriginJavaDefault = "(Java default)"

func (s *state) run() {
	switch s.role {
	case Consumer, Producer, Admin:
	default:
		s.errorf("", "", "unknown client role %q (want consumer, producer or admin)", string(s.role))
		return
	}
	s.security()

	keys := make([]string, 0, len(s.props))
	for k := range s.props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s.one(k)
	}
	s.compound()
	s.javaDefaults()
}

func (s *state) one(key string) {
	p := s.props[key]
	st, known := settingByKey[key]
	if !known {
		s.unknown(key, p)
		return
	}
	if !st.roles.has(s.role) {
		s.ignore(key, fmt.Sprintf("a %s setting; Java's %s client does not define it and ignores it", st.roleNames(), s.role))
		return
	}
	if isSSLKey(key) && !s.useSSL {
		s.ignore(key, fmt.Sprintf("security.protocol=%s does not use TLS; Java ignores ssl.* settings too", s.proto))
		return
	}
	if isSASLKey(key) && !s.useSASL {
		s.ignore(key, fmt.Sprintf("security.protocol=%s does not use SASL; Java ignores sasl.* settings too", s.proto))
		return
	}
	if st.mech != "" && s.mech != st.mech {
		s.ignore(key, "only used with sasl.mechanism="+st.mech)
		return
	}
	if !s.checkType(key, st, p.Value) {
		return
	}
	switch st.Action {
	case ActionMap:
		s.mapValue(key, st, p.Value)
	case ActionWarn:
		if st.isDefault(p.Value) {
			s.ignore(key, "set to the Java default "+quoteDefault(st.Default)+"; nothing to translate")
			return
		}
		if p.Pos == "default" {
			s.ignore(key, "a supplied default with no librdkafka equivalent: "+st.Note)
			return
		}
		s.warnf(key, st.hint, "%s; ignored", st.Note)
	case ActionDrop:
		s.ignore(key, st.Note)
	case ActionRefuse:
		if st.isDefault(p.Value) {
			s.ignore(key, "set to the Java default "+quoteDefault(st.Default)+"; nothing to translate")
			return
		}
		s.errorf(key, st.hint, "%s", st.Note)
	case ActionSpecial:
		if h := specialHandlers[key]; h != nil {
			h(s, key, p.Value)
		}
		// Keys without a handler here are consumed by security() or compound().
	}
}

func quoteDefault(d string) string {
	if d == "" {
		return "(empty)"
	}
	return strconv.Quote(d)
}

// unknown handles a key no Java client defines.
func (s *state) unknown(key string, p Prop) {
	hint := ""
	if j, ok := javaForRdkafka[key]; ok {
		hint = fmt.Sprintf("%q is a librdkafka property; MM2 files use Java client names: write %q", key, j)
	} else if _, ok := rdkafkaProps[key]; ok {
		hint = fmt.Sprintf("%q is a librdkafka property; MM2 files take Java client settings only", key)
	}
	if p.Pos == "default" {
		s.ignore(key, "not a Kafka client setting")
		return
	}
	s.warnf(key, hint, "not a Kafka client setting, ignored")
}

// finish sorts diagnostics by position.
func (s *state) finish() {
	sort.SliceStable(s.res.Diags, func(i, j int) bool {
		return posLess(s.res.Diags[i].Pos, s.res.Diags[j].Pos)
	})
}

// posLess orders "file:line" positions by file then numeric line; "default" and "" go last.
func posLess(a, b string) bool {
	ka, kb := posKey(a), posKey(b)
	if ka.rank != kb.rank {
		return ka.rank < kb.rank
	}
	if ka.file != kb.file {
		return ka.file < kb.file
	}
	return ka.line < kb.line
}

type posSort struct {
	rank int
	file string
	line int
}

func posKey(p string) posSort {
	switch p {
	case "":
		return posSort{rank: 2}
	case "default":
		return posSort{rank: 1}
	}
	if i := strings.LastIndexByte(p, ':'); i >= 0 {
		if n, err := strconv.Atoi(p[i+1:]); err == nil {
			return posSort{file: p[:i], line: n}
		}
	}
	return posSort{file: p}
}

func isSSLKey(k string) bool  { return strings.HasPrefix(k, "ssl.") }
func isSASLKey(k string) bool { return strings.HasPrefix(k, "sasl.") }
