package mm2conf

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestRegexJavaVectors replays patterns whose compile result and
// Matcher.matches() answers were recorded with the real JDK
// (testdata/mm2/javacheck/RegexVectors.java). Every pattern Java rejects must
// be rejected; every pattern Java accepts must either match exactly as Java
// does or be refused with a "not supported" error.
func TestRegexJavaVectors(t *testing.T) {
	f, err := os.Open("../testdata/mm2/regex/java_vectors.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var supported, unsupported, rejected int
	for sc.Scan() {
		var v struct {
			P     string   `json:"p"`
			In    []string `json:"in"`
			M     []bool   `json:"m"`
			Error string   `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		re, err := compileJavaRegex(v.P)
		if v.Error != "" {
			if err == nil {
				t.Errorf("pattern %q: Java rejects it (%s), we accept it", v.P, v.Error)
			}
			rejected++
			continue
		}
		if err != nil {
			var rerr *RegexError
			if !errors.As(err, &rerr) || !strings.Contains(rerr.Msg, "not supported") {
				t.Errorf("pattern %q: Java accepts it, we fail without saying it is unsupported: %v", v.P, err)
			}
			unsupported++
			continue
		}
		supported++
		for i, s := range v.In {
			got, merr := re.MatchString(s)
			if merr != nil || got != v.M[i] {
				t.Errorf("pattern %q on %q: Java %v, ours %v (%v)", v.P, s, v.M[i], got, merr)
			}
		}
	}
	t.Logf("%d supported, %d refused as unsupported, %d rejected like Java", supported, unsupported, rejected)
	if supported < 80 {
		t.Fatalf("only %d supported patterns", supported)
	}
}

func TestFilterSemantics(t *testing.T) {
	f, err := CompileFilter(ParseList(".*"), ParseList(`mm2.*\.internal, .*\.replica, __.*`))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"orders": true, "mm2-offsets.A.internal": false, "foo.internal": true, "x.replica": false, "__consumer_offsets": false,
	} {
		if got := f.Match(name); got != want {
			t.Errorf("Match(%q) = %v, want %v", name, got, want)
		}
		if got := f.Match(name); got != want { // cached
			t.Errorf("cached Match(%q) = %v", name, got)
		}
	}
	empty, err := CompileFilter(ParseList(""), nil)
	if err != nil || empty.Match("") || empty.Match("x") {
		t.Fatalf("empty include list must match nothing: %v", err)
	}
	_, err = CompileFilter([]string{"a++"}, nil)
	var fe *FilterError
	if !errors.As(err, &fe) || fe.List != "include" || !strings.Contains(fe.Error(), "possessive") {
		t.Fatalf("possessive: %v", err)
	}
	// A comma inside a quantifier is split by the LIST parser first, as in MM2.
	if _, err = CompileFilter(ParseList("a{1,3}"), nil); err == nil || !strings.Contains(err.Error(), "illegal repetition") {
		t.Fatalf("a{1,3}: %v", err)
	}
	// Lookarounds and atomic groups work.
	la, err := CompileFilter([]string{"(?!test).*", "(?>a+)b"}, []string{".*(?<=-dlq)"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"orders": true, "testing": false, "aab": true, "orders-dlq": false} {
		if got := la.Match(name); got != want {
			t.Errorf("lookaround Match(%q) = %v, want %v", name, got, want)
		}
	}
}

func BenchmarkFilterMatchCached(b *testing.B) {
	f, _ := CompileFilter(ParseList(".*"), ParseList(`mm2.*\.internal, .*\.replica, __.*`))
	for i := 0; i < b.N; i++ {
		f.Match("orders.v1")
	}
}
