package mm2conf

import (
	"encoding/json"
	"sort"
	"strings"
)

// mapDiff renders the keys where two maps differ (mm2: MM2's, kmm: kmm's).
func mapDiff(mm2, kmm map[string]string) string {
	var b strings.Builder
	keys := map[string]bool{}
	for k := range mm2 {
		keys[k] = true
	}
	for k := range kmm {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		a, aok := mm2[k]
		b2, bok := kmm[k]
		if a != b2 || aok != bok {
			b.WriteString("  " + k + ": mm2=")
			if aok {
				b.WriteString(strconvQuote(a))
			} else {
				b.WriteString("(absent)")
			}
			b.WriteString(" kmm=")
			if bok {
				b.WriteString(strconvQuote(b2))
			} else {
				b.WriteString("(absent)")
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
