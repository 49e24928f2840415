package rdkafka

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// LogError is one librdkafka log line of warning level or worse, as an error.
type LogError struct {
	Level int    // syslog level: 3 error, 4 warning
	Tag   string // librdkafka facility, e.g. FAIL, REQTMOUT
	Msg   string
}

func (l *LogError) Error() string { return fmt.Sprintf("librdkafka %s: %s", l.Tag, l.Msg) }

// Option tunes a client made by NewProducer, NewConsumer or NewAdmin.
type Option func(*options)

type options struct {
	problems  func(error)
	logBuffer int
	rttStats  time.Duration // WithLinkRTT: librdkafka statistics interval
}

// WithLinkRTT makes an admin client collect librdkafka statistics every interval so that
// Admin.LinkRTT can report the round trip of its requests (the replicator's cluster probe).
func WithLinkRTT(interval time.Duration) Option { return func(o *options) { o.rttStats = interval } }

// withLogBuffer gives a consumer a log channel of n events instead of the Go client's 10,000
// (800 KB of pointer-holding memory per client): for the many short-lived readers of a scan.
func withLogBuffer(n int) Option { return func(o *options) { o.logBuffer = n } }

// WithProblems routes the client's librdkafka log lines of warning level or worse (as
// *LogError) and its client-level error events (kafka errors) to f instead of stderr. f is
// called from the client's own goroutines; it must be cheap and safe for concurrent use.
func WithProblems(f func(error)) Option { return func(o *options) { o.problems = f } }

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Transient reports librdkafka log lines that only say a cluster is settling (a broker just
// restarted: partition leaders not yet in the metadata cache, coordinators still loading) and
// that librdkafka retries by itself: not worth a warning.
func Transient(err error) bool {
	var le *LogError
	if !errors.As(err, &le) {
		return false
	}
	m := strings.ToLower(le.Msg)
	switch le.Tag {
	case "METADATAUPDATE":
		return strings.Contains(m, "not found in cache")
	case "GETPID":
		return strings.Contains(m, "load in progress") || strings.Contains(m, "not available") || strings.Contains(m, "all brokers are down")
	}
	return false
}

// Reach is what an error says about reaching a cluster.
type Reach struct {
	// Kind is a short class: "connection refused", "DNS", "TLS", "SASL", "timeout",
	// "connection lost", "all brokers down".
	Kind string
	// Detail is librdkafka's text without the broker prefix and the "(after ... in state ...)"
	// suffix, so repeats of one cause read the same.
	Detail string
	// Specific is false for the generic kinds (connection lost, all brokers down) that a more
	// specific cause of the same outage should replace.
	Specific bool
}

// String is "kind: detail".
func (r Reach) String() string {
	if r.Detail == "" || strings.EqualFold(r.Detail, r.Kind) {
		return r.Kind
	}
	return r.Kind + ": " + r.Detail
}

var (
	afterSuffix  = regexp.MustCompile(`\s*\((after \d+ms in state|\d+ identical error).*\)\s*$`)
	brokerPrefix = regexp.MustCompile(`^(\[thrd:[^\]]*\]: )?((GroupCoordinator|TxnCoordinator)(/\d+)?: )?(\S+:\d+(/(bootstrap|\d+|\S+))?: )?`)
)

func cleanDetail(s string) string {
	s = strings.TrimSpace(s)
	s = brokerPrefix.ReplaceAllString(s, "")
	for {
		t := afterSuffix.ReplaceAllString(s, "")
		if t == s {
			break
		}
		s = t
	}
	return strings.TrimSpace(s)
}

// Reachability classifies err (a kafka error, a *LogError, or an error wrapping one) as a
// problem reaching the cluster. ok is false for anything else (a rejected record, a missing
// topic, an authorisation refusal, a local queue problem).
func Reachability(err error) (r Reach, ok bool) {
	if err == nil {
		return Reach{}, false
	}
	var le *LogError
	var ke kafka.Error
	text := err.Error()
	switch {
	case errors.As(err, &le):
		text = le.Msg
	case errors.As(err, &ke):
		text = ke.String()
		switch ke.Code() {
		case kafka.ErrResolve:
			return Reach{Kind: "DNS", Detail: cleanDetail(text), Specific: true}, true
		case kafka.ErrSsl:
			return Reach{Kind: "TLS", Detail: cleanDetail(text), Specific: true}, true
		case kafka.ErrAuthentication, kafka.ErrSaslAuthenticationFailed:
			return Reach{Kind: "SASL", Detail: cleanDetail(text), Specific: true}, true
		case kafka.ErrAllBrokersDown:
			return Reach{Kind: "all brokers down", Detail: cleanDetail(text)}, true
		case kafka.ErrTimedOut, kafka.ErrTimedOutQueue:
			return Reach{Kind: "timeout", Detail: cleanDetail(text), Specific: true}, true
		case kafka.ErrTransport:
			// classified by its text below (refused, reset, ...)
		default:
			return Reach{}, false
		}
	}
	d := cleanDetail(text)
	l := strings.ToLower(text)
	switch {
	case strings.Contains(l, "connection refused"):
		return Reach{Kind: "connection refused", Detail: d, Specific: true}, true
	case strings.Contains(l, "failed to resolve") || strings.Contains(l, "name or service not known") || strings.Contains(l, "resolve"):
		return Reach{Kind: "DNS", Detail: d, Specific: true}, true
	case strings.Contains(l, "ssl") || strings.Contains(l, "certificate") || strings.Contains(l, "tls"):
		return Reach{Kind: "TLS", Detail: d, Specific: true}, true
	case strings.Contains(l, "sasl") || strings.Contains(l, "authentication"):
		return Reach{Kind: "SASL", Detail: d, Specific: true}, true
	case strings.Contains(l, "no route to host") || strings.Contains(l, "network is unreachable") || strings.Contains(l, "host is unreachable"):
		return Reach{Kind: "no route to host", Detail: d, Specific: true}, true
	case strings.Contains(l, "brokers are down"):
		return Reach{Kind: "all brokers down", Detail: d}, true
	case strings.Contains(l, "timed out") || strings.Contains(l, "timeout"):
		return Reach{Kind: "timeout", Detail: d, Specific: true}, true
	case strings.Contains(l, "disconnected") || strings.Contains(l, "connection reset") || strings.Contains(l, "broken pipe") ||
		strings.Contains(l, "transport failure") || strings.Contains(l, "connect to"):
		return Reach{Kind: "connection lost", Detail: d}, true
	}
	if ke.Code() == kafka.ErrTransport {
		return Reach{Kind: "connection lost", Detail: d}, true
	}
	return Reach{}, false
}
