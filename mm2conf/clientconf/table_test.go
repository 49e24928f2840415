package clientconf

import (
	"bufio"
	"os"
	"sort"
	"strings"
	"testing"
)

// TestTableCoversJavaClients checks the table against the ConfigDefs of kafka-clients 4.1.1
// (testdata/java-client-configs-4.1.1.tsv): every Java key is in the table with the same roles,
// type and default.
func TestTableCoversJavaClients(t *testing.T) {
	f, err := os.Open("testdata/java-client-configs-4.1.1.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fs := strings.Split(line, "\t")
		name, roles, typ, def := fs[0], fs[1], fs[2], fs[3]
		n++
		st, ok := settingByKey[name]
		if !ok {
			t.Errorf("Java key %s (%s) is missing from the table", name, roles)
			continue
		}
		if sortRoles(st.Roles) != sortRoles(roles) {
			t.Errorf("%s: table roles %q, Java %q", name, st.Roles, roles)
		}
		if st.Type != typ {
			t.Errorf("%s: table type %s, Java %s", name, st.Type, typ)
		}
		if jd := javaDefault(typ, def); normValue(typ, st.Default) != normValue(typ, jd) {
			t.Errorf("%s: table default %q, Java %q", name, st.Default, jd)
		}
	}
	if n < 140 {
		t.Fatalf("read only %d Java keys", n)
	}
}

func sortRoles(r string) string {
	b := []byte(r)
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	return string(b)
}

// javaDefault turns the dump's Java toString of a default into the table's spelling.
func javaDefault(typ, d string) string {
	switch d {
	case "null", "<none>":
		return ""
	}
	if typ == "LIST" {
		d = strings.TrimSuffix(strings.TrimPrefix(d, "["), "]")
		var out []string
		for _, p := range strings.Split(d, ",") {
			out = append(out, strings.TrimPrefix(strings.TrimSpace(p), "class "))
		}
		return strings.Join(out, ",")
	}
	if typ == "CLASS" {
		return strings.TrimPrefix(d, "class ")
	}
	return d
}

// TestTableTargetsExistInLibrdkafka checks every librdkafka property the table names against
// librdkafka 2.11.1's CONFIGURATION.md.
func TestTableTargetsExistInLibrdkafka(t *testing.T) {
	for _, s := range Settings() {
		var targets []string
		switch {
		case s.Action == ActionMap:
			for _, r := range []Role{Producer, Consumer, Admin} {
				if (tableEntry{roles: s.rolesMask()}).roles.has(r) {
					targets = append(targets, s.TargetFor(r))
				}
			}
		case s.Action == ActionSpecial && s.Rdkafka != "":
			for _, p := range strings.Split(s.Rdkafka, ",") {
				p = strings.TrimSpace(p)
				if i := strings.Index(p, " ("); i >= 0 {
					p = p[:i]
				}
				if !strings.HasSuffix(p, "*") {
					targets = append(targets, p)
				}
			}
		case s.Rdkafka != "":
			t.Errorf("%s: action %v should not name a librdkafka property", s.Java, s.Action)
		}
		for _, p := range targets {
			if _, ok := LookupRdkafka(p); !ok {
				t.Errorf("%s: %q is not a librdkafka 2.11 property", s.Java, p)
			}
		}
		if s.Note == "" {
			t.Errorf("%s: no note", s.Java)
		}
	}
	for _, d := range JavaDefaults() {
		if _, ok := LookupRdkafka(d.Rdkafka); !ok {
			t.Errorf("Java default %s is not a librdkafka property", d.Rdkafka)
		}
	}
	for rd, j := range javaForRdkafka {
		if _, ok := LookupRdkafka(rd); !ok {
			t.Errorf("hint table: %q is not a librdkafka property", rd)
		}
		if _, ok := settingByKey[j]; !ok {
			t.Errorf("hint table: %q is not a Java key in the table", j)
		}
	}
}

func TestTableSorted(t *testing.T) {
	for i := 1; i < len(table); i++ {
		if table[i-1].Java >= table[i].Java {
			t.Errorf("table not sorted at %s, %s", table[i-1].Java, table[i].Java)
		}
	}
}

func TestRdkafkaPropertiesParsed(t *testing.T) {
	p, ok := LookupRdkafka("socket.timeout.ms")
	if !ok || !p.numeric || p.min != 10 || p.max != 300000 {
		t.Fatalf("socket.timeout.ms = %+v", p)
	}
	p, ok = LookupRdkafka("isolation.level")
	if !ok || len(p.enum) != 2 {
		t.Fatalf("isolation.level = %+v", p)
	}
	if len(rdkafkaProps) < 180 {
		t.Fatalf("only %d librdkafka properties", len(rdkafkaProps))
	}
}
