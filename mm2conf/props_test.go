package mm2conf

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestLexerJavaVectors replays inputs whose java.util.Properties.load result
// was recorded with the real JDK (testdata/mm2/javacheck/PropsVectors.java).
func TestLexerJavaVectors(t *testing.T) {
	f, err := os.Open("../testdata/mm2/lexer/java_vectors.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var v struct {
			In    string            `json:"in"`
			Props map[string]string `json:"props"`
			Error string            `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		data, err := hex.DecodeString(v.In)
		if err != nil {
			t.Fatal(err)
		}
		n++
		p, _, perr := ParseProperties("t.properties", data, Latin1)
		if v.Error != "" {
			if perr == nil {
				t.Errorf("input %q: Java failed with %q, we parsed %v", data, v.Error, p.Map())
				continue
			}
			if !strings.HasSuffix(perr.Error(), v.Error) {
				t.Errorf("input %q: Java error %q, ours %q", data, v.Error, perr)
			}
			continue
		}
		if perr != nil {
			t.Errorf("input %q: Java parsed %v, we failed: %v", data, v.Props, perr)
			continue
		}
		got := map[string]string{}
		for k, val := range p.Map() {
			// Jackson writes a lone surrogate as '?'; we hold U+FFFD.
			got[strings.ReplaceAll(k, "\uFFFD", "?")] = strings.ReplaceAll(val, "\uFFFD", "?")
		}
		want := v.Props
		if want == nil {
			want = map[string]string{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("input %q:\n java %q\n ours %q", data, want, got)
		}
	}
	if n < 1000 {
		t.Fatalf("only %d vectors", n)
	}
}

func TestLexerPositions(t *testing.T) {
	src := "# comment\n\nclusters = A, B\n  A.bootstrap.servers = \\\n     a:9092\r\nA->B.enabled=true \n! bang\nA->B.enabled = false\nbad\\u12=x\n"
	_, _, err := ParseProperties("mm2.properties", []byte(src), Latin1)
	if err == nil || err.Error() != `mm2.properties:9: Malformed \uxxxx encoding.` {
		t.Fatalf("err = %v", err)
	}
	src = strings.Replace(src, "bad\\u12=x\n", "", 1)
	p, diags, err := ParseProperties("mm2.properties", []byte(src), Latin1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Key: "clusters", Value: "A, B", Pos: Pos{"mm2.properties", 3}},
		{Key: "A.bootstrap.servers", Value: "a:9092", Pos: Pos{"mm2.properties", 4}},
		{Key: "A->B.enabled", Value: "true ", Pos: Pos{"mm2.properties", 6}},
		{Key: "A->B.enabled", Value: "false", Pos: Pos{"mm2.properties", 8}},
	}
	if !reflect.DeepEqual(p.Entries, want) {
		t.Fatalf("entries:\n%#v\nwant\n%#v", p.Entries, want)
	}
	if len(diags) != 1 || diags[0].String() != `mm2.properties:8: warning: duplicate key "A->B.enabled": this line overrides line 6 (the last one wins, as in Java)` {
		t.Fatalf("diags = %v", diags)
	}
}

func TestLexerLatin1AndUTF8(t *testing.T) {
	p, _, err := ParseProperties("f", []byte("k=caf\xc3\xa9"), Latin1)
	if err != nil || p.Map()["k"] != "caf\u00c3\u00a9" {
		t.Fatalf("latin1: %q %v", p.Map()["k"], err)
	}
	p, _, err = ParseProperties("f", []byte("k=caf\xc3\xa9"), UTF8)
	if err != nil || p.Map()["k"] != "café" {
		t.Fatalf("utf8: %q %v", p.Map()["k"], err)
	}
	if _, _, err = ParseProperties("f", []byte("a=1\nk=caf\xe9"), UTF8); err == nil || !strings.HasPrefix(err.Error(), "f:2: malformed UTF-8") {
		t.Fatalf("bad utf8: %v", err)
	}
}

func TestSerializeRoundTrip(t *testing.T) {
	entries := []Entry{
		{Key: " lead space", Value: " lead and trail "},
		{Key: "a=b:c#d!e\\f", Value: "x\ty\nz\r\f"},
		{Key: "uni\u00e9\U0001F600", Value: "\u0000\u007f\u2028"},
		{Key: "", Value: ""},
	}
	p, _, err := ParseProperties("rt", SerializeProperties(entries), Latin1)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		got, ok := p.Get(e.Key)
		if !ok || got.Value != e.Value {
			t.Errorf("key %q: got %q (%v), want %q", e.Key, got.Value, ok, e.Value)
		}
	}
}
