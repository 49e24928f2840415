package rdkafka

import "testing"

// The membership consumer's settings: the group and what correctness needs are fixed; the
// side's timeouts win over kmm's defaults.
func TestMembershipSettings(t *testing.T) {
	c := MembershipSettings("kmm-A->B-workers", Config{"bootstrap.servers": "a:9092", "group.id": "users", "enable.auto.commit": "true",
		"partition.assignment.strategy": "range", "session.timeout.ms": "20000", "group.instance.id": "x"})
	for k, want := range map[string]string{"group.id": "kmm-A->B-workers", "enable.auto.commit": "false", "partition.assignment.strategy": "cooperative-sticky",
		"group.protocol": "classic", "session.timeout.ms": "20000", "heartbeat.interval.ms": "2000", "bootstrap.servers": "a:9092", "group.instance.id": ""} {
		if c[k] != want {
			t.Errorf("%s = %q, want %q", k, c[k], want)
		}
	}
	if MembershipSettings("g", Config{})["session.timeout.ms"] != "10000" {
		t.Error("default session.timeout.ms is not 10000")
	}
}
