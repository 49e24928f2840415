package clientconf

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

const plainMod = "org.apache.kafka.common.security.plain.PlainLoginModule"

type jaasCase struct {
	name    string
	in      string
	want    []JAASEntry // nil with wantErr
	wantErr string      // substring of the error
	// javaDiffers marks inputs where kmm is deliberately stricter than Java (Java accepts a
	// null option name); the differential test skips them.
	javaDiffers bool
}

func opts(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

var jaasCases = []jaasCase{
	{name: "plain", in: plainMod + ` required username="u" password="p";`,
		want: []JAASEntry{{plainMod, "REQUIRED", opts("username", "u", "password", "p")}}},
	{name: "any order, bare words", in: plainMod + ` required password=p username=u;`,
		want: []JAASEntry{{plainMod, "REQUIRED", opts("username", "u", "password", "p")}}},
	{name: "no blank before semicolon", in: plainMod + ` required username="u" password="p";   `,
		want: []JAASEntry{{plainMod, "REQUIRED", opts("username", "u", "password", "p")}}},
	{name: "blank before semicolon and newlines", in: plainMod + "\n  required\n  username=\"u\"\n  password=\"p\"\n  ;\n",
		want: []JAASEntry{{plainMod, "REQUIRED", opts("username", "u", "password", "p")}}},
	{name: "flag case-insensitive", in: `X Required;`, want: []JAASEntry{{"X", "REQUIRED", opts()}}},
	{name: "other flags", in: `X optional; Y sufficient a=b; Z requisite;`,
		want: []JAASEntry{{"X", "OPTIONAL", opts()}, {"Y", "SUFFICIENT", opts("a", "b")}, {"Z", "REQUISITE", opts()}}},
	{name: "single quotes", in: `X required username='u' password='p;x "y"';`,
		want: []JAASEntry{{"X", "REQUIRED", opts("username", "u", "password", `p;x "y"`)}}},
	{name: "escapes", in: `X required password="a\"b\\c\nd\te\'f\q";`,
		want: []JAASEntry{{"X", "REQUIRED", opts("password", "a\"b\\c\nd\te'fq")}}},
	{name: "octal escapes", in: `X required p="\101\60\0z\477";`,
		want: []JAASEntry{{"X", "REQUIRED", opts("p", "A0\x00z\x277")}}},
	{name: "equals and semicolon inside quotes", in: `X required p="a=b;c";`,
		want: []JAASEntry{{"X", "REQUIRED", opts("p", "a=b;c")}}},
	{name: "unicode", in: `X required password="pässwörd€" user=naïve;`,
		want: []JAASEntry{{"X", "REQUIRED", opts("password", "pässwörd€", "user", "naïve")}}},
	{name: "block comment", in: `/* leading */ X /* mid */ required a="1"; /* trailing */`,
		want: []JAASEntry{{"X", "REQUIRED", opts("a", "1")}}},
	{name: "line comment", in: "X required a=\"1\"; // the rest\n",
		want: []JAASEntry{{"X", "REQUIRED", opts("a", "1")}}},
	{name: "empty quoted value", in: `X required a="";`, want: []JAASEntry{{"X", "REQUIRED", opts("a", "")}}},
	{name: "duplicate option, last wins", in: `X required a=x a=y;`, want: []JAASEntry{{"X", "REQUIRED", opts("a", "y")}}},
	{name: "quoted module name", in: `"X" required;`, want: []JAASEntry{{"X", "REQUIRED", opts()}}},
	{name: "unterminated quote runs to end of line", in: "X required a=\"b\n;",
		want: []JAASEntry{{"X", "REQUIRED", opts("a", "b")}}},
	{name: "words stop at quotes", in: `X required a=b"c";`, wantErr: "value not specified"},

	{name: "empty", in: ``, wantErr: "login module not specified"},
	{name: "only comment", in: `/* nothing */`, wantErr: "login module not specified"},
	{name: "no flag", in: `X`, wantErr: "control flag not specified"},
	{name: "bad flag", in: `X mandatory;`, wantErr: "invalid control flag"},
	{name: "flag is a symbol", in: `X =;`, wantErr: "control flag not available"},
	{name: "no semicolon", in: plainMod + ` required username="u" password="p"`, wantErr: "not terminated by a semicolon"},
	{name: "option without value", in: `X required a;`, wantErr: "value not specified"},
	{name: "option with empty value", in: `X required a=;`, wantErr: "value not specified"},
	{name: "option at end", in: `X required a=`, wantErr: "value not specified"},
	{name: "colon in bare value", in: `X required url=http://h/p;`, wantErr: "expected an option name"},
	{name: "slash in bare value comments out the rest", in: `X required path=a/b;`, wantErr: "not terminated"},
	{name: "lone slash comment", in: "X required a=b /c;\n;", want: []JAASEntry{{"X", "REQUIRED", opts("a", "b")}}},
	{name: "unterminated block comment", in: `X required /* a=b;`, wantErr: "not terminated"},
	{name: "module name is a symbol", in: `; X required;`, wantErr: "expected a login module class name"},
	{name: "option name is a symbol", in: `X required =a;`, wantErr: "expected an option name"},
	{name: "two equals", in: `X required a=b=c;`, wantErr: "option"},
	{name: "null option name", in: `X required @=b;`, wantErr: "expected an option name", javaDiffers: true},

	// StreamTokenizer's default syntax: unquoted values must start like a Java identifier.
	{name: "word with digits, dots, dashes", in: `X required a=x1.2-y_z$;`, want: []JAASEntry{{"X", "REQUIRED", opts("a", "x1.2-y_z$")}}},
	{name: "value starting with a digit", in: `X required password=1secret;`, wantErr: "value not specified"},
	{name: "number value", in: `X required a=1;`, wantErr: "value not specified"},
	{name: "value starting with a dash", in: `X required a=-x;`, wantErr: "value not specified"},
	{name: "value starting with a dot", in: `X required a=.5;`, wantErr: "value not specified"},
	{name: "value with at sign", in: `X required username=alice@corp;`, wantErr: "option"},
	{name: "quoted value with anything", in: `X required a="1@#:-/x";`, want: []JAASEntry{{"X", "REQUIRED", opts("a", "1@#:-/x")}}},
	{name: "latin-1 letters are word characters", in: "X required a=été;", want: []JAASEntry{{"X", "REQUIRED", opts("a", "été")}}},
	{name: "C1 control is a symbol", in: "X required a=bc;", wantErr: "option"},
	{name: "module with digits", in: `org.example.Login2Module required;`, want: []JAASEntry{{"org.example.Login2Module", "REQUIRED", opts()}}},
}

func TestParseJAAS(t *testing.T) {
	for _, c := range jaasCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseJAAS(c.in)
			if c.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseJAAS(%q) = %+v, want error containing %q", c.in, got, c.wantErr)
				}
				if !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("ParseJAAS(%q) error %q, want it to contain %q", c.in, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseJAAS(%q): %v", c.in, err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ParseJAAS(%q)\n got %+v\nwant %+v", c.in, got, c.want)
			}
		})
	}
}

// TestParseJAASErrorsHideValues checks that malformed configurations never echo what could be
// a password.
func TestParseJAASErrorsHideValues(t *testing.T) {
	for _, in := range []string{
		plainMod + ` required username="u" password=hunter2 hunter3;`,
		plainMod + ` required username="u" password="hunter2" "hunter3";`,
		plainMod + ` required username="u" password hunter2;`,
		`hunter2 hunter3;`,
		`org.x.Y hunter2;`,
	} {
		_, err := ParseJAAS(in)
		if err == nil {
			t.Fatalf("ParseJAAS(%q): want an error", in)
		}
		if strings.Contains(err.Error(), "hunter") {
			t.Errorf("ParseJAAS(%q) error leaks a value: %v", in, err)
		}
	}
}

func FuzzParseJAAS(f *testing.F) {
	for _, c := range jaasCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, err := ParseJAAS(s)
		if err == nil && len(es) == 0 {
			t.Fatalf("no entries and no error for %q", s)
		}
	})
}

// TestParseJAASAgainstJava runs the cases through Kafka's own JaasConfig (kafka-clients jar of
// the test bed) and compares. It skips when java or the jars are missing, unless
// KMM_REQUIRE_JARS=1.
func TestParseJAASAgainstJava(t *testing.T) {
	if testing.Short() && os.Getenv("KMM_REQUIRE_JARS") != "1" {
		t.Skip("-short (make unit): the Java cross-checks run in make test")
	}
	java, err := exec.LookPath("java")
	libs := kafkaLibs(t)
	if err != nil || libs == "" {
		if os.Getenv("KMM_REQUIRE_JARS") == "1" {
			t.Fatalf("java and the Kafka jars are required (KMM_REQUIRE_JARS=1); run scripts/testbed.sh fetch")
		}
		t.Skip("java or the Kafka jars (scripts/testbed.sh fetch) not available")
	}
	var cases []jaasCase
	for _, c := range jaasCases {
		if !c.javaDiffers {
			cases = append(cases, c)
		}
	}
	// Random inputs over the characters that matter to the tokenizer.
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune(" \n\t\r\"'\\/*;=@:-._$a1Z7\u00e9\u0085\u20ac")
	for i := 0; i < 400; i++ {
		var b strings.Builder
		b.WriteString("X required ")
		for n := rng.IntN(14); n > 0; n-- {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, jaasCase{name: fmt.Sprintf("random %d", i), in: b.String()})
	}
	dir := t.TempDir()
	var in strings.Builder
	for _, c := range cases {
		in.WriteString(base64.StdEncoding.EncodeToString([]byte(c.in)) + "\n")
	}
	vec := filepath.Join(dir, "vectors.txt")
	if err := os.WriteFile(vec, []byte(in.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	src, _ := filepath.Abs("testdata/JaasCheck.java")
	out, err := exec.Command(java, "-cp", filepath.Join(libs, "*"), src, vec).Output()
	if err != nil {
		t.Fatalf("java JaasCheck: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	i := 0
	for sc.Scan() {
		if i >= len(cases) {
			t.Fatalf("extra output line %q", sc.Text())
		}
		c := cases[i]
		i++
		javaRes := sc.Text()
		got, err := ParseJAAS(c.in)
		goRes := "ERR"
		if err == nil {
			goRes = encodeJAASResult(got)
		}
		if javaRes != goRes && !(goRes == "ERR" && strings.HasPrefix(javaRes, "OK") && strings.Contains(err.Error(), "expected an option name")) {
			// (Java accepts a symbol or number as an option name and stores it under a null
			// key; kmm refuses such entries.)
			t.Errorf("%s: %q\n Java: %s\n   Go: %s", c.name, c.in, decodeJAASResult(javaRes), decodeJAASResult(goRes))
		}
	}
	if i != len(cases) {
		t.Fatalf("Java printed %d results for %d cases", i, len(cases))
	}
}

func encodeJAASResult(es []JAASEntry) string {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	var sb strings.Builder
	sb.WriteString("OK")
	for _, e := range es {
		sb.WriteString(" " + b64(e.Module) + "|" + e.Flag)
		keys := make([]string, 0, len(e.Options))
		for k := range e.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys) // Java's TreeMap orders by UTF-16 code units; the cases are ASCII keys
		for _, k := range keys {
			sb.WriteString("|" + b64(k) + "=" + b64(e.Options[k]))
		}
	}
	return sb.String()
}

func decodeJAASResult(s string) string {
	var parts []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '|' || r == '=' }) {
		if b, err := base64.StdEncoding.DecodeString(f); err == nil && f != "OK" && f != "ERR" && strings.ToUpper(f) != f {
			parts = append(parts, strconvQuote(string(b)))
		} else {
			parts = append(parts, f)
		}
	}
	return strings.Join(parts, " ")
}

func strconvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// kafkaLibs finds the test bed's Kafka jar directory: $KMM_TESTBED_DIR or <repo>/.testbed.
func kafkaLibs(t *testing.T) string {
	t.Helper()
	bed := os.Getenv("KMM_TESTBED_DIR")
	if bed == "" {
		dir, _ := os.Getwd()
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				bed = filepath.Join(dir, ".testbed")
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return ""
			}
			dir = parent
		}
	}
	ms, _ := filepath.Glob(filepath.Join(bed, "kafka-*", "libs", "kafka-clients-*.jar"))
	if len(ms) == 0 {
		return ""
	}
	return filepath.Dir(ms[0])
}
