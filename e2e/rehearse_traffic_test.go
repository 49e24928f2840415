package e2e

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/app"
)

// TestRehearseUnderTraffic (issue 34): rehearsals while the application writes (300 records/s)
// and its group reads and commits on A, and kmm replicate copies: every one exits 0 (a group
// ahead of replication is traffic, not a mismatch), a row is exact only when its shadow position
// holds the group's next record (or both are at the end), and the rows and the summary agree:
// a partition's source end is never below a group's position on it, and a group ahead of
// replication by k records is counted in its partition's records not on the target.
func TestRehearseUnderTraffic(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "rht")
	const parts = 2
	bed.A.CreateTopic(t, topic, parts, nil)
	ab := al.A + "->" + al.B
	group := testbed.Unique(t, "rg")
	props := interopProps(t, bed, al, 2, ab+".enabled = true", ab+".topics = "+regexp.QuoteMeta(topic))
	data, err := os.ReadFile(props)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(props, []byte(strings.Replace(string(data), "groups = "+al.A+"-nogroup", "groups = "+regexp.QuoteMeta(group), 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	k := startKMM(t, "replicate", props)
	defer k.stop(t, syscall.SIGTERM, 40*time.Second)
	prod, err := app.StartProducer(bed.A.Bootstrap, topic, parts, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Stop()
	cons, err := app.StartConsumer(bed.A.Bootstrap, group, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Stop()
	waitCount(t, bed.B, al.A+"."+topic, parts, 1000, time.Minute)
	for i := 0; i < 4; i++ {
		r := Run(t, "failover", props, "--flow", ab, "--mode", "rehearse", "--group", group, "--yes", "-o", "json")
		if r.Code != 0 {
			t.Fatalf("rehearsal %d: exit %d\n%s\n%s", i, r.Code, r.Stdout, tail(r.Stderr, 20))
		}
		var env struct {
			Items []struct {
				Topic        string `json:"topic"`
				Partition    int32  `json:"partition"`
				SourceOffset int64  `json:"source_offset"`
				Exact        bool   `json:"exact"`
				Rereads      *int64 `json:"rereads"` // null: not known
				Ahead        int64  `json:"ahead_of_replication"`
				Why          string `json:"why"`
			} `json:"items"`
			Partitions []struct {
				Partition     int32 `json:"partition"`
				SourceEnd     int64 `json:"source_end"`
				Replicated    int64 `json:"replicated"`
				NotReplicated int64 `json:"not_replicated"`
			} `json:"partitions"`
			Checks []struct {
				Partition int32  `json:"partition"`
				Result    string `json:"result"`
				Detail    string `json:"detail"`
			} `json:"shadow_checks"`
			Predicted struct {
				NotReplicated int64 `json:"not_replicated_records"`
				Exact         int   `json:"exact_partitions"`
				Ahead         int   `json:"ahead_partitions"`
				Mismatched    int   `json:"mismatched_positions"`
			} `json:"predicted"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil || len(env.Items) != parts || len(env.Partitions) != parts {
			t.Fatalf("rehearsal %d: %v\n%s", i, err, r.Stdout)
		}
		var sum int64
		for _, p := range env.Partitions {
			sum += p.NotReplicated
			if p.NotReplicated != max(0, p.SourceEnd-p.Replicated) {
				t.Errorf("rehearsal %d: partition %+v: not replicated is not source end - replicated", i, p)
			}
			for _, it := range env.Items {
				if it.Partition != p.Partition {
					continue
				}
				if it.SourceOffset > p.SourceEnd {
					t.Errorf("rehearsal %d: partition %d's source end %d is below the group's position %d", i, p.Partition, p.SourceEnd, it.SourceOffset)
				}
				if it.Ahead > 0 && (it.Exact || p.NotReplicated < it.Ahead) {
					t.Errorf("rehearsal %d: %+v ahead of replication, partition %+v", i, it, p)
				}
				if it.Exact && (it.Rereads == nil || *it.Rereads != 0) {
					t.Errorf("rehearsal %d: exact with %s re-reads: %+v", i, fmtKnown(it.Rereads), it)
				}
			}
		}
		if sum != env.Predicted.NotReplicated || env.Predicted.Mismatched != 0 {
			t.Errorf("rehearsal %d: summary %+v, the partitions add up to %d", i, env.Predicted, sum)
		}
		for _, c := range env.Checks {
			for _, it := range env.Items {
				if it.Partition == c.Partition && it.Exact && c.Result != "equal" && c.Result != "at-end" {
					t.Errorf("rehearsal %d: exact row %+v, shadow check %+v", i, it, c)
				}
			}
		}
		t.Logf("rehearsal %d: %+v", i, env.Predicted)
	}
}
