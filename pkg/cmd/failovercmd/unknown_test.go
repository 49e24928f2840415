package failovercmd

import (
	"strings"
	"testing"
)

// An emergency failover's RPO that nothing on the target knows is said to be not known, never
// 0 records; a partition's unknown figures are "?" (issue 35 item 6).
func TestRPONoteUnknown(t *testing.T) {
	if s := rpoNote("A", "B", nil, nil, nil); !strings.HasPrefix(s, "not known: nothing on B says where A's partitions ended") {
		t.Errorf("unknown: %q", s)
	}
	lo, hi, age := int64(5), int64(9), int64(1500)
	if s := rpoNote("A", "B", &lo, &hi, &age); !strings.HasPrefix(s, "5 record(s) known written on A and not on B (its end known as of 1.5s before the cut); at most about 9") {
		t.Errorf("known: %q", s)
	}
	if count(-1) != "?" || count(0) != "0" {
		t.Errorf("count: %q %q", count(-1), count(0))
	}
}
