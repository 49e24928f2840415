package verify_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/replbed"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/verify"
)

// What replicate's config and ACL sync leave on the target, verify finds in order, and what
// verify reports, the sync repairs (one rule, pkg/metasync). Configs: the source's override is
// copied; an override on the target of a config the source leaves at its default is a
// difference (the sync deletes it). ACLs: ALLOW READ copied, ALLOW ALL as READ, DENY copied,
// ALLOW WRITE never; verify then finds READ covered and WRITE missing (a warning).
func TestRealVerifyAgreesWithSync(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := context.Background()
	topic := testbed.Unique(t, "vsync")
	remote := "A." + topic
	flowOf := func() *flow.Flow {
		f := verifyFlow(bed, regexp.QuoteMeta(topic))
		f.SyncTopicACLs, f.SyncACLsInterval, f.SyncConfigsInterval = true, time.Second, time.Second
		if err := f.Validate(); err != nil {
			t.Fatal(err)
		}
		return f
	}
	bed.A.CreateTopic(t, topic, 1, map[string]string{"retention.ms": "86400000"})
	bed.A.Produce(t, records(topic, 1, 0, 20))
	lit := func(name, principal, op, perm string) rdkafka.ACL {
		return rdkafka.ACL{ResourceType: "TOPIC", ResourceName: name, PatternType: "LITERAL", Principal: principal, Host: "*", Operation: op, Permission: perm}
	}
	srcACLs := []rdkafka.ACL{
		lit(topic, "User:alice", "READ", "ALLOW"), lit(topic, "User:carol", "ALL", "ALLOW"),
		lit(topic, "User:bob", "WRITE", "ALLOW"), lit(topic, "User:mallory", "READ", "DENY"),
	}
	wantTgt := []rdkafka.ACL{lit(remote, "User:alice", "READ", "ALLOW"), lit(remote, "User:carol", "READ", "ALLOW"), lit(remote, "User:mallory", "READ", "DENY")}
	adminA, adminB := bed.A.Admin(t), bed.B.Admin(t)
	if err := adminA.CreateACLs(ctx, srcACLs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = adminA.DeleteACLs(context.Background(), srcACLs...)
		_ = adminB.DeleteACLs(context.Background(), append(wantTgt, lit(remote, "User:bob", "WRITE", "ALLOW"))...)
	})

	f := flowOf()
	r := replbed.Start(t, f)
	waitReplicated(t, bed, f, map[string]int{topic: 1})
	testbed.Eventually(t, time.Minute, func() error {
		got, err := adminB.DescribeTopicACLs(ctx, []string{remote})
		if err != nil {
			return err
		}
		for _, w := range wantTgt {
			if !slices.Contains(got, w) {
				return fmt.Errorf("ACL %s not synced to %s (has %v)", w, remote, got)
			}
		}
		for _, g := range got {
			if g.ResourceName == remote && g.Permission == "ALLOW" && (g.Operation == "WRITE" || g.Operation == "ALL") {
				return fmt.Errorf("ACL sync created %s", g)
			}
		}
		return nil
	})
	r.Stop(t)

	checkSynced := func(rep *verify.Report) {
		t.Helper()
		if fs := find(rep, verify.CheckConfigs, topic, -1, verify.OK); len(fs) != 1 {
			t.Errorf("configs after the sync:\n%s", dump(rep))
		}
		if fs := find(rep, verify.CheckACLs, topic, -1, verify.Warn); len(fs) != 1 || !strings.HasPrefix(fs[0].Reason, "User:bob, User:carol may WRITE") {
			t.Errorf("ACLs after the sync: want READ covered, WRITE of bob and carol missing:\n%s", dump(rep))
		}
	}
	checkSynced(run(t, flowOf(), verify.Options{Groups: func(string) bool { return false }}))

	// Drift on the target, replicator stopped: another retention, and an override of a config
	// the source leaves at its default.
	if err := adminB.IncrementalAlterTopicConfigs(ctx, map[string][]rdkafka.ConfigOp{remote: {
		{Name: "retention.ms", Value: "7200000"}, {Name: "max.message.bytes", Value: "2000000"}}}); err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, 30*time.Second, func() error {
		rep := run(t, flowOf(), verify.Options{Groups: func(string) bool { return false }})
		fs := find(rep, verify.CheckConfigs, topic, -1, verify.Fail)
		if len(fs) != 1 || !regexp.MustCompile(`max\.message\.bytes=\d+ \(default\) on the source, 2000000 on the target`).MatchString(fs[0].Reason) ||
			!strings.Contains(fs[0].Reason, "retention.ms=86400000 on the source, 7200000 on the target") {
			return fmt.Errorf("drift not reported:\n%s", dump(rep))
		}
		return nil
	})

	// The sync repairs what verify reported.
	r = replbed.Start(t, flowOf())
	testbed.Eventually(t, time.Minute, func() error {
		rep := run(t, flowOf(), verify.Options{Groups: func(string) bool { return false }})
		if len(find(rep, verify.CheckConfigs, topic, -1, verify.OK)) != 1 {
			return fmt.Errorf("not repaired yet:\n%s", dump(rep))
		}
		return nil
	})
	r.Stop(t)
	checkSynced(run(t, flowOf(), verify.Options{Groups: func(string) bool { return false }}))
}
