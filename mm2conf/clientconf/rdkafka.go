package clientconf

import (
	_ "embed"
	"strconv"
	"strings"
)

// rdkafkaPropertiesTSV lists librdkafka 2.11.1's properties (from its CONFIGURATION.md):
// scope, name, C/P, range, default.
//
//go:embed rdkafka_properties.tsv
var rdkafkaPropertiesTSV string

// RdkafkaProperty describes one librdkafka property.
type RdkafkaProperty struct {
	Name    string
	Topic   bool   // a topic-level property (accepted on the global config too)
	Clients string // "*", "C" or "P"
	Range   string // as documented: "min .. max" or an enum list, or ""
	Default string
	min     int64
	max     int64
	numeric bool
	enum    []string
}

var rdkafkaProps = parseRdkafkaProps(rdkafkaPropertiesTSV)

func parseRdkafkaProps(tsv string) map[string]*RdkafkaProperty {
	m := map[string]*RdkafkaProperty{}
	for _, line := range strings.Split(tsv, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		for len(f) < 5 {
			f = append(f, "")
		}
		p := &RdkafkaProperty{Name: f[1], Topic: f[0] == "topic", Clients: f[2], Range: f[3], Default: f[4]}
		if a, b, ok := strings.Cut(p.Range, " .. "); ok {
			lo, err1 := strconv.ParseInt(a, 10, 64)
			hi, err2 := strconv.ParseInt(b, 10, 64)
			if err1 == nil && err2 == nil {
				p.min, p.max, p.numeric = lo, hi, true
			}
		} else if p.Range != "" && p.Name != "debug" && p.Name != "builtin.features" {
			for _, e := range strings.Split(p.Range, ",") {
				p.enum = append(p.enum, strings.TrimSpace(e))
			}
		}
		if old, dup := m[p.Name]; dup && !old.Topic {
			// Some names exist both globally and per topic; keep the global one.
			continue
		}
		m[p.Name] = p
	}
	return m
}

// LookupRdkafka returns librdkafka 2.11.1's description of a property.
func LookupRdkafka(name string) (RdkafkaProperty, bool) {
	p, ok := rdkafkaProps[name]
	if !ok {
		return RdkafkaProperty{}, false
	}
	return *p, true
}
