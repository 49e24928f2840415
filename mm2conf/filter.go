package mm2conf

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2"
)

// regexTimeout bounds one match, so that a catastrophic pattern cannot hang
// the replicator. A timed-out name is treated as included=false and
// excluded=true (fail closed).
const regexTimeout = 250 * time.Millisecond

// maxFilterCache bounds the per-filter result cache.
const maxFilterCache = 1 << 17

// Filter is MM2's include/exclude name filter (DefaultTopicFilter,
// DefaultGroupFilter and DefaultConfigPropertyFilter semantics): each list's
// entries are joined with '|' into one Java regex that must match the whole
// name; an empty list matches nothing; a name is accepted when it is included
// and not excluded. Results are cached per name, so calling Match once per
// topic or group is cheap. A Filter is safe for concurrent use.
type Filter struct {
	Include []string
	Exclude []string

	include *regexp2.Regexp // nil: matches nothing
	exclude *regexp2.Regexp

	cache sync.Map // name -> bool
	size  atomic.Int64
}

// FilterError tells which list of a filter holds a bad regex.
type FilterError struct {
	List string // "include" or "exclude"
	Err  *RegexError
}

func (e *FilterError) Error() string { return e.List + " list: " + e.Err.Error() }

// CompileFilter compiles include and exclude lists (already split as a
// Kafka LIST) with Java regex semantics.
func CompileFilter(include, exclude []string) (*Filter, error) {
	f := &Filter{Include: include, Exclude: exclude}
	var err error
	if f.include, err = compilePatternList(include); err != nil {
		return nil, &FilterError{List: "include", Err: err.(*RegexError)}
	}
	if f.exclude, err = compilePatternList(exclude); err != nil {
		return nil, &FilterError{List: "exclude", Err: err.(*RegexError)}
	}
	return f, nil
}

// CompilePatternList compiles one LIST the way MirrorUtils.compilePatternList
// does (join with '|'; empty list matches nothing) and returns a matcher for
// whole names. It is exported for other MM2-style lists (e.g. an
// EnvVarConfigProvider allowlist).
func CompilePatternList(list []string) (func(string) bool, error) {
	re, err := compilePatternList(list)
	if err != nil {
		return nil, err
	}
	return func(s string) bool { ok, _ := matchRe(re, s); return ok }, nil
}

func compilePatternList(list []string) (*regexp2.Regexp, error) {
	if len(list) == 0 {
		return nil, nil
	}
	return compileJavaRegex(strings.Join(list, "|"))
}

func matchRe(re *regexp2.Regexp, s string) (bool, error) {
	if re == nil {
		return false, nil
	}
	return re.MatchString(s)
}

// Included reports whether name matches the include list.
func (f *Filter) Included(name string) bool {
	ok, err := matchRe(f.include, name)
	return ok && err == nil
}

// Excluded reports whether name matches the exclude list.
func (f *Filter) Excluded(name string) bool {
	ok, err := matchRe(f.exclude, name)
	return ok || err != nil
}

// Match reports whether name is included and not excluded.
func (f *Filter) Match(name string) bool {
	if v, ok := f.cache.Load(name); ok {
		return v.(bool)
	}
	res := f.Included(name) && !f.Excluded(name)
	if f.size.Load() < maxFilterCache {
		if _, loaded := f.cache.LoadOrStore(name, res); !loaded {
			f.size.Add(1)
		}
	}
	return res
}
