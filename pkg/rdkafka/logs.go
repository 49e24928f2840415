package rdkafka

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/mm2conf/clientconf"
)

// librdkafka's own log lines never go raw to stderr (`%3|1700000000.123|FAIL|rdkafka#producer-1|
// ...`): every client this package creates forwards them to a channel (go.logs.channel.enable),
// and one goroutine per client drains that channel until the client is closed (closing the
// client closes the channel). Each line goes to the client's problem handler (WithProblems), if
// it has one and the line is a warning or worse, and to the process logger (SetLogger): at
// debug level when the client has a handler (the handler decides what the operator sees: one
// warning per outage, not one per reconnect), else at the level librdkafka gave it (0-3 error,
// 4 warning, 5 info, 6-7 debug). Values of the client's secret settings are replaced by
// "[hidden]" in every line before anything sees it.

var (
	procLogger atomic.Pointer[slog.Logger]
	drainsMu   sync.Mutex
	drainsBy   = map[string]int{} // the same per client label: tests of one label ignore others
)

// drainsOf reports how many log channels of clients whose label starts with prefix are being
// drained.
func drainsOf(prefix string) int {
	drainsMu.Lock()
	defer drainsMu.Unlock()
	n := 0
	for k, v := range drainsBy {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

func countDrain(name string, d int) {
	drainsMu.Lock()
	drainsBy[name] += d
	if drainsBy[name] == 0 {
		delete(drainsBy, name)
	}
	drainsMu.Unlock()
}

// SetLogger sets the logger librdkafka's log lines of every client go to (the process logger:
// text or JSON on stderr, with its level). Until it is called they go to slog.Default().
func SetLogger(l *slog.Logger) {
	if l != nil {
		procLogger.Store(l)
	}
}

func logger() *slog.Logger {
	if l := procLogger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// LogLevel maps a librdkafka (syslog) log level to a slog level.
func LogLevel(syslog int) slog.Level {
	switch {
	case syslog <= 3:
		return slog.LevelError
	case syslog == 4:
		return slog.LevelWarn
	case syslog == 5:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// withLogChannel returns settings with librdkafka's logs forwarded to the client's channel
// (always: a file cannot turn it off, or the lines would go raw to stderr).
func withLogChannel(cfg Config) Config {
	out := make(Config, len(cfg)+1)
	for k, v := range cfg {
		out[k] = v
	}
	out["go.logs.channel.enable"] = "true"
	return out
}

// secretValues are the values of cfg's secret settings (passwords, keys, tokens), longest
// first so that a value containing another is hidden whole.
func secretValues(cfg Config) []string {
	var out []string
	for k, v := range cfg {
		if len(v) >= 3 && (clientconf.IsSecretKey(k) || k == "sasl.oauthbearer.client.secret") {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func hideSecrets(s string, secrets []string) string {
	for _, v := range secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "[hidden]")
		}
	}
	return s
}

// startDrain drains a client's log channel on a goroutine of its own (drainLogs).
func startDrain(name string, logs chan kafka.LogEvent, cfg Config, problems func(error)) {
	if logs == nil {
		return
	}
	countDrain(name, 1)
	go func() {
		defer countDrain(name, -1)
		drainLogs(name, logs, cfg, problems)
	}()
}

// drainLogs reads a client's log channel until the client closes it. name is kmm's label of the
// client ("cluster A"); problems may be nil. It never blocks on anything but the logger.
func drainLogs(name string, logs chan kafka.LogEvent, cfg Config, problems func(error)) {
	if logs == nil {
		return
	}
	secrets := secretValues(cfg)
	ctx := context.Background()
	for l := range logs {
		msg := hideSecrets(threadPrefix.ReplaceAllString(l.Message, ""), secrets)
		lvl := LogLevel(l.Level)
		if problems != nil {
			if l.Level <= 4 {
				problems(&LogError{Level: l.Level, Tag: l.Tag, Msg: msg})
			}
			lvl = slog.LevelDebug
		}
		if lg := logger(); lg.Enabled(ctx, lvl) {
			lg.Log(ctx, lvl, "librdkafka "+l.Tag+": "+msg, "client", name, "rdkafka_client", l.Name, "rdkafka_level", l.Level)
		}
	}
}
