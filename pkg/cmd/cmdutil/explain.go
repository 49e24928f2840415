package cmdutil

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/flow"
)

// ReplicateRule starts the origin of every value `kmm replicate` sets itself, so explain's
// readers (and tests) can tell kmm's values from MM2's.
const ReplicateRule = "kmm replicate"

// OverlayReplicate turns an explain report of MM2's resolution into what `kmm replicate` uses:
// mm2conf (a leaf) knows MM2's defaults only, pkg/flow holds kmm's (flow.Defaults) and the
// settings it forces on the replication producer (flow.ReplicationProducer). Where the file
// does not set a key whose kmm default differs from MM2's, the entry shows kmm's value with the
// reason as its origin; acks, enable.idempotence and max.in.flight.requests.per.connection of
// the target producer show what kmm sends to librdkafka whatever the file says. keys is the
// explain KEY filter: a forced key is added only when the filter selects it.
func OverlayReplicate(r *mm2conf.ExplainReport, keys []string) {
	defaults := map[string]flow.Default{}
	for _, d := range flow.Defaults {
		if d.Differs() && d.InFile() {
			defaults[strings.TrimPrefix(d.Key, "<T>.")] = d
		}
	}
	for fi := range r.Flows {
		f := &r.Flows[fi]
		for si := range f.Sections {
			s := &f.Sections[si]
			switch s.Name {
			case "connector", "worker":
				seen := map[string]bool{}
				for ei := range s.Entries {
					e := &s.Entries[ei]
					seen[e.Key] = true
					d, ok := defaults[e.Key]
					if !ok || !e.Default {
						continue
					}
					e.Value, e.Origin = d.KMM, kmmDefault(d)
				}
				// The worker section lists what is set; kmm's worker defaults (<T>.* rows) are
				// effective all the same.
				for _, d := range flow.Defaults {
					k := strings.TrimPrefix(d.Key, "<T>.")
					if s.Name == "worker" && k != d.Key && d.Differs() && !seen[k] && mm2conf.KeyMatches(k, keys) {
						s.Entries = append(s.Entries, mm2conf.ExplainEntry{Key: k, Value: d.KMM, Default: true, Origin: kmmDefault(d)})
					}
				}
				sort.SliceStable(s.Entries, func(i, j int) bool { return s.Entries[i].Key < s.Entries[j].Key })
			case mm2conf.RoleTargetProducer + " (librdkafka)":
				overlayProducer(s, keys)
				if f.ExactlyOnce {
					overlayTransactions(f, s, keys)
				}
			case mm2conf.RoleOffsetSyncsProducer + " (librdkafka)":
				force(s, keys, "acks", "all", ReplicateRule+" forces acks=all", "; offset syncs are written with acks=all")
			}
		}
	}
}

func overlayProducer(s *mm2conf.ExplainSection, keys []string) {
	const why = "; the replication producer is idempotent so records arrive once and in order per partition"
	set := func(key, value, rule string) { force(s, keys, key, value, rule, why) }
	set("acks", "all", ReplicateRule+" forces acks=all")
	set("enable.idempotence", "true", ReplicateRule+" forces enable.idempotence=true")
	for i := range s.Entries {
		e := &s.Entries[i]
		if e.Key != "max.in.flight.requests.per.connection" {
			continue
		}
		if e.Default {
			set(e.Key, strconv.Itoa(flow.WANMaxInFlight), ReplicateRule+" default when the file does not set it (Connect's 1 is for its non-idempotent producer): one request per round trip capped a pipeline at ~1 MB per round trip")
			break
		}
		if n, err := strconv.Atoi(e.Value); err == nil && n > flow.IdempotentMaxInFlight {
			set(e.Key, strconv.Itoa(flow.IdempotentMaxInFlight), ReplicateRule+" caps max.in.flight.requests.per.connection at "+strconv.Itoa(flow.IdempotentMaxInFlight)+" (librdkafka's limit with idempotence)")
		}
		break
	}
}

// force sets key to value in s with rule+why as its origin (naming the value it replaced), or
// adds it when the explain KEY filter selects it; s stays sorted by key.
func force(s *mm2conf.ExplainSection, keys []string, key, value, rule, why string) {
	defer sort.SliceStable(s.Entries, func(i, j int) bool { return s.Entries[i].Key < s.Entries[j].Key })
	for i := range s.Entries {
		if e := &s.Entries[i]; e.Key == key {
			if e.Value != value {
				rule += " (" + e.Value + " replaced)"
			}
			e.Value, e.Default, e.Origin = value, false, mm2conf.ExplainOrigin{Rule: rule + why}
			return
		}
	}
	if mm2conf.KeyMatches(key, keys) {
		s.Entries = append(s.Entries, mm2conf.ExplainEntry{Key: key, Value: value, Origin: mm2conf.ExplainOrigin{Rule: rule + why}})
	}
}

func kmmDefault(d flow.Default) mm2conf.ExplainOrigin {
	return mm2conf.ExplainOrigin{Rule: ReplicateRule + " default (MM2's: " + d.MM2 + "): " + d.Why}
}

// overlayTransactions shows the transactional settings of an exactly-once flow's replication
// producer: the transactional.id of each pipeline and transaction.timeout.ms.
func overlayTransactions(f *mm2conf.ExplainFlow, s *mm2conf.ExplainSection, keys []string) {
	group := f.Source + "-mm2"
	for _, sec := range f.Sections {
		if sec.Name != "worker" {
			continue
		}
		for _, e := range sec.Entries {
			if e.Key == "group.id" {
				group = e.Value
			}
		}
	}
	force(s, keys, "transactional.id", group+"-"+flow.ConnectorName+"-<task>", ReplicateRule+" sets it per pipeline (exactly.once.source.support = enabled)",
		": <group.id>-MirrorSourceConnector-<task>, Connect's id for MM2's task, so a restarted kmm or MM2 fences the old producer")
	for _, e := range s.Entries {
		if e.Key == "transaction.timeout.ms" {
			return
		}
	}
	if mm2conf.KeyMatches("transaction.timeout.ms", keys) {
		s.Entries = append(s.Entries, mm2conf.ExplainEntry{Key: "transaction.timeout.ms", Value: "60000", Default: true,
			Origin: mm2conf.ExplainOrigin{Rule: "librdkafka and Java default; exactly-once: a transaction not committed within it is aborted by the coordinator (kmm commits every kmm.transaction.interval.ms)"}})
		sort.SliceStable(s.Entries, func(i, j int) bool { return s.Entries[i].Key < s.Entries[j].Key })
	}
}
