package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/flowstate"
)

// rehearsal is the JSON of kmm failover --mode rehearse.
type rehearsal struct {
	Items []translation `json:"items"`
	Parts []struct {
		Topic         string `json:"topic"`
		Partition     int32  `json:"partition"`
		SourceEnd     int64  `json:"source_end"`
		NotReplicated int64  `json:"not_replicated"`
	} `json:"partitions"`
	Checks []struct {
		Group        string `json:"group"`
		ShadowGroup  string `json:"shadow_group"`
		ShadowOffset int64  `json:"shadow_offset"`
		Result       string `json:"result"`
		Detail       string `json:"detail"`
	} `json:"shadow_checks"`
	Predicted struct {
		NotReplicated int64 `json:"not_replicated_records"`
		Verified      int   `json:"verified_positions"`
		Mismatched    int   `json:"mismatched_positions"`
	} `json:"predicted"`
}

// translation is one group partition of failover's items (rehearse and planned alike).
type translation struct {
	Group        string `json:"group"`
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	RemoteTopic  string `json:"remote_topic"`
	SourceOffset int64  `json:"source_offset"`
	TargetOffset int64  `json:"target_offset"`
	Exact        bool   `json:"exact"`
	Rereads      int64  `json:"rereads"`
}

// groupOffsetsOn returns the committed offsets of groups on c ("group topic[p]" -> offset).
func groupOffsetsOn(t *testing.T, c testbed.Cluster, groups ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, g := range groups {
		offs, err := c.Admin(t).ListGroupOffsets(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		for tp, om := range offs {
			out[fmt.Sprintf("%s %s[%d]", g, tp.Topic, tp.Partition)] = om.Offset
		}
	}
	return out
}

// shadowGroupsLeft lists the groups of c named kmm-rehearse.<g> for groups, and whether any has
// committed offsets.
func shadowGroupsLeft(t *testing.T, c testbed.Cluster, groups ...string) []string {
	t.Helper()
	ls, err := c.Admin(t).ListGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, l := range ls {
		for _, g := range groups {
			if l.ID == "kmm-rehearse."+g {
				left = append(left, l.ID)
			}
		}
	}
	for _, g := range groups {
		if offs := groupOffsetsOn(t, c, "kmm-rehearse."+g); len(offs) > 0 {
			left = append(left, fmt.Sprintf("%v", offs))
		}
	}
	return left
}

// rehearseBeforePlanned runs kmm failover --mode rehearse on the stopped application of a
// planned-failover test (args select the mode, the flow and the groups, or a drill file) and
// checks: exit 0, every shadow position's record equals the group's next record on the source
// (or both at the end), the real groups' offsets on B unchanged, no shadow group left, the flow
// state untouched. With interrupt, a first rehearsal is SIGKILLed after its first shadow commit:
// the shadow group is left on B, and the next rehearsal deletes it and starts over.
func rehearseBeforePlanned(t *testing.T, bed *testbed.Bed, al aliases, props string, groups []string, interrupt bool, args ...string) rehearsal {
	t.Helper()
	before := groupOffsetsOn(t, bed.B, groups...)
	stateBefore := readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)]
	base := append([]string{"failover", props, "--yes", "-o", "json"}, args...)
	if interrupt {
		// Steps: clean-before, commit group 1, ...: pause after the first shadow commit.
		killAtPause(t, 2, 2*time.Minute, base...)
		if left := shadowGroupsLeft(t, bed.B, groups...); len(left) == 0 {
			t.Fatalf("the interrupted rehearsal left no shadow group on B")
		}
	}
	r := Run(t, base...)
	if r.Code != 0 {
		t.Fatalf("rehearse: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if interrupt && !strings.Contains(r.Stderr, "did not finish: its shadow groups are deleted first") {
		t.Errorf("the re-run did not say it cleans up the interrupted rehearsal:\n%s", r.Stderr)
	}
	var rh rehearsal
	if err := json.Unmarshal([]byte(r.Stdout), &rh); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if len(rh.Checks) == 0 || len(rh.Checks) != len(rh.Items) || rh.Predicted.Verified != len(rh.Checks) || rh.Predicted.Mismatched != 0 {
		t.Errorf("shadow checks: %+v predicted %+v", rh.Checks, rh.Predicted)
	}
	for _, c := range rh.Checks {
		if c.Result != "equal" && c.Result != "at-end" {
			t.Errorf("shadow position not proved: %+v", c)
		}
		if !strings.HasPrefix(c.ShadowGroup, "kmm-rehearse.") || c.ShadowOffset < 0 {
			t.Errorf("shadow check: %+v", c)
		}
	}
	if after := groupOffsetsOn(t, bed.B, groups...); !reflect.DeepEqual(before, after) {
		t.Errorf("the rehearsal changed real groups on B: before %v, after %v", before, after)
	}
	if left := shadowGroupsLeft(t, bed.B, groups...); len(left) > 0 {
		t.Errorf("shadow groups left on B: %v", left)
	}
	if st := readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)]; string(st) != string(stateBefore) {
		t.Errorf("the rehearsal changed the flow state: %s -> %s", stateBefore, st)
	}
	t.Logf("rehearsal: %d translations, predicted %+v\n%s", len(rh.Items), rh.Predicted, tail(r.Stderr, 12))
	return rh
}

// matchRehearsal checks a rehearsal's predictions against the planned failover run right after
// it: the same target offset, exactness and re-reads per group partition, and the same source
// ends as the cut recorded in the flow state.
func matchRehearsal(t *testing.T, rh rehearsal, planned []translation, cut []flowstate.PartitionCut) {
	t.Helper()
	key := func(x translation) string { return fmt.Sprintf("%s %s[%d]", x.Group, x.Topic, x.Partition) }
	want := map[string]translation{}
	for _, x := range planned {
		want[key(x)] = x
	}
	if len(rh.Items) != len(planned) {
		t.Errorf("rehearsal predicted %d translations, planned made %d", len(rh.Items), len(planned))
	}
	for _, x := range rh.Items {
		if w, ok := want[key(x)]; !ok || w != x {
			t.Errorf("rehearsal predicted %+v, planned made %+v", x, w)
		}
	}
	ends := map[string]int64{}
	for _, c := range cut {
		ends[fmt.Sprintf("%s[%d]", c.Topic, c.Partition)] = c.SourceEnd
	}
	for _, p := range rh.Parts {
		if e, ok := ends[fmt.Sprintf("%s[%d]", p.Topic, p.Partition)]; !ok || e != p.SourceEnd {
			t.Errorf("rehearsal: %s[%d] source end %d, the planned cut has %d", p.Topic, p.Partition, p.SourceEnd, e)
		}
	}
}
