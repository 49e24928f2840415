package switchover

import (
	"fmt"
	"reflect"
	"testing"
)

// The index gives each group exactly the rows a scan of the translation gives, in order, and
// follows a new translation.
func TestGroupIndexMatchesScan(t *testing.T) {
	var tr []ExactOffset
	for g := range 30 {
		for p := range 7 {
			tr = append(tr, ExactOffset{Group: fmt.Sprintf("g%d", g%10), RemoteTopic: fmt.Sprintf("A.t%d", g), Partition: int32(p), TargetOffset: int64(g*100 + p)})
		}
	}
	x := &groupIndex{}
	for g := range 11 {
		id := fmt.Sprintf("g%d", g)
		var want []ExactOffset // a scan of the whole translation, as the steps did before
		for _, e := range tr {
			if e.Group == id {
				want = append(want, e)
			}
		}
		if got := x.of(tr, id); !reflect.DeepEqual(got, want) {
			t.Fatalf("group %s: index gives %d rows %v, scan %d %v", id, len(got), got, len(want), want)
		}
		if g < 10 && len(want) != 21 {
			t.Fatalf("group %s: scan found %d rows, want 21", id, len(want))
		}
	}
	other := []ExactOffset{{Group: "g1", RemoteTopic: "A.x", Partition: 0, TargetOffset: 5}}
	if got := x.of(other, "g1"); len(got) != 1 || got[0].RemoteTopic != "A.x" {
		t.Fatalf("a new translation: got %v", got)
	}
}
