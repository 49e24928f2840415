package flow

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
)

// Default is one default of a flow setting. The table below is the only place kmm's defaults
// live: FromMM2 applies KMM where the MM2 file does not set Key and KMM differs from MM2;
// Validate fills every value a flow built by hand left unset. docs/replicate.md's "defaults that
// differ from MM2" table is checked against the rows where MM2 != KMM (TestDocDefaults).
type Default struct {
	// Key is the MM2 property (as written in a file; <T>. prefixes the per-cluster worker keys),
	// or a description in parentheses for engine settings no MM2 file can set.
	Key string
	// MM2 and KMM are the defaults in Key's unit, as MM2's documentation writes them.
	MM2, KMM string
	// Why kmm's default differs (empty when it does not).
	Why string

	// override sets kmm's default on a flow converted from MM2 (only for rows that differ).
	override func(f *Flow)
	// fill sets kmm's default where a flow built by hand left the value unset.
	fill func(f *Flow)
}

// Differs reports whether kmm's default is not MM2's.
func (d Default) Differs() bool { return d.MM2 != d.KMM }

// InFile reports whether Key is a property an MM2 file can set.
func (d Default) InFile() bool { return d.Key != "" && d.Key[0] != '(' }

func durUnit(d time.Duration, unit time.Duration) string { return strconv.FormatInt(int64(d/unit), 10) }

// interval is a Default for a duration field expressed in unit (time.Second for *.seconds keys,
// time.Millisecond for *.ms keys).
func interval(key string, unit, mm2, kmm time.Duration, why string, field func(*Flow) *time.Duration) Default {
	d := Default{Key: key, MM2: durUnit(mm2, unit), KMM: durUnit(kmm, unit), Why: why,
		fill: func(f *Flow) {
			if p := field(f); *p <= 0 {
				*p = kmm
			}
		}}
	if mm2 != kmm {
		d.override = func(f *Flow) { *field(f) = kmm }
	}
	return d
}

// engineOnly marks a row no MM2 file can set: FromMM2 leaves it to Validate.
func engineOnly(d Default, mm2 string) Default {
	d.MM2, d.override = mm2, nil
	return d
}

// Defaults is every default of a flow, MM2's and kmm's side by side.
var Defaults = []Default{
	interval("refresh.topics.interval.seconds", time.Second, 600*time.Second, 10*time.Second,
		"new topics and partitions are copied within seconds", func(f *Flow) *time.Duration { return &f.RefreshTopicsInterval }),
	interval("<T>.offset.flush.interval.ms", time.Millisecond, 60*time.Second, time.Second,
		"resume positions (and the offset maps) are stored every second: a crash re-copies about a second of records", func(f *Flow) *time.Duration { return &f.OffsetFlushInterval }),
	interval("emit.checkpoints.interval.seconds", time.Second, 60*time.Second, 5*time.Second,
		"kmm follows `__consumer_offsets` as commits happen; this is only its polling fallback", func(f *Flow) *time.Duration { return &f.CheckpointPollInterval }),
	interval("sync.group.offsets.interval.seconds", time.Second, 60*time.Second, 5*time.Second,
		"idle groups on the target get translated offsets within seconds", func(f *Flow) *time.Duration { return &f.SyncGroupOffsetsInterval }),
	interval("sync.topic.configs.interval.seconds", time.Second, 600*time.Second, 600*time.Second, "",
		func(f *Flow) *time.Duration { return &f.SyncConfigsInterval }),
	interval("sync.topic.acls.interval.seconds", time.Second, 600*time.Second, 600*time.Second, "",
		func(f *Flow) *time.Duration { return &f.SyncACLsInterval }),
	interval("emit.heartbeats.interval.seconds", time.Second, time.Second, time.Second, "",
		func(f *Flow) *time.Duration { return &f.HeartbeatInterval }),
	interval("admin.timeout.ms", time.Millisecond, time.Minute, time.Minute, "",
		func(f *Flow) *time.Duration { return &f.AdminTimeout }),
	engineOnly(interval("(offset-sync promotion interval, ms)", time.Millisecond, 0, time.Second,
		"MM2 promotes delayed offset syncs at every offset commit; kmm every second, so a caught-up group translates exactly within about a second",
		func(f *Flow) *time.Duration { return &f.SyncPromoteInterval }), "at every offset commit"),
	// Exactly-once mode only (exactly.once.source.support = enabled): mm2conf reads the key.
	{Key: "kmm.transaction.interval.ms", MM2: "every poll (transaction.boundary = poll)", KMM: "1000",
		Why: "exactly-once mode: a pipeline commits its transaction (records and progress record) every second, not after every batch it reads: fewer, larger transactions",
		fill: func(f *Flow) {
			if f.TransactionInterval <= 0 {
				f.TransactionInterval = time.Second
			}
		}},
	// Applied by FromMM2 from the target producer's translated settings (a connector's
	// producer.override.* counts as set too), not by an override: see WANMaxInFlight.
	{Key: "<T>.producer.max.in.flight.requests.per.connection", MM2: "1", KMM: strconv.Itoa(WANMaxInFlight),
		Why: "kmm's producer is always idempotent, which keeps order with up to 5; 1 request per round trip capped a pipeline at ~1 MB per round trip (14 MB/s over 100 ms)"},
	{Key: "tasks.max", MM2: "1", KMM: "1", Why: "", fill: func(f *Flow) {
		if f.Tasks < 1 { // values below 1 run one pipeline
			f.Tasks = 1
		}
		if f.Tasks > mm2conf.MaxPipelines { // config check warns (tasks-max-capped)
			f.Tasks = mm2conf.MaxPipelines
		}
	}},
	{Key: "offset.lag.max", MM2: "100", KMM: "100", fill: func(f *Flow) {
		if f.OffsetLagMax < 0 {
			f.OffsetLagMax = 100
		}
	}},
	{Key: "<T>.offset.storage.topic", MM2: "mm2-offsets.<S>.internal", KMM: "mm2-offsets.<S>.internal", fill: func(f *Flow) {
		if f.OffsetsTopic == "" {
			f.OffsetsTopic = "mm2-offsets." + f.Source + ".internal"
		}
	}},
	{Key: "<T>.offset.storage.partitions", MM2: "25", KMM: "25", fill: func(f *Flow) {
		if f.OffsetsTopicPartitions <= 0 {
			f.OffsetsTopicPartitions = 25
		}
	}},
	{Key: "<T>.offset.storage.replication.factor", MM2: "3", KMM: "3", fill: func(f *Flow) {
		if f.OffsetsTopicRF == 0 {
			f.OffsetsTopicRF = 3
		}
	}},
}

// String renders a row for messages and tests.
func (d Default) String() string {
	return fmt.Sprintf("%s: MM2 %s, kmm %s", d.Key, d.MM2, d.KMM)
}

// DocRow is d as a row of docs/replicate.md's "defaults that differ from MM2" table.
func DocRow(d Default) string {
	return fmt.Sprintf("| `%s` | %s | %s | %s |", d.Key, d.MM2, d.KMM, d.Why)
}
