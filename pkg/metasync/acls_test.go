package metasync

import (
	"reflect"
	"testing"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
)

func acl(perm, op, pattern, name, principal string) cluster.ACL {
	return cluster.ACL{ResourceType: "TOPIC", ResourceName: name, PatternType: pattern, Principal: principal, Host: "*", Operation: op, Permission: perm}
}

func TestTargetACL(t *testing.T) {
	alias := func(f *flow.Flow) { f.SourceAlias, f.TargetAlias, f.AliasesSet = "east", "west", true }
	group := acl("ALLOW", "READ", "LITERAL", "orders", "User:alice")
	group.ResourceType = "GROUP"
	for _, tc := range []struct {
		name     string
		identity bool
		change   func(*flow.Flow)
		in       cluster.ACL
		want     *cluster.ACL // nil: not synced
	}{
		{name: "ALLOW READ is copied to the remote topic", in: acl("ALLOW", "READ", "LITERAL", "orders", "User:alice"),
			want: ptr(acl("ALLOW", "READ", "LITERAL", "A.orders", "User:alice"))},
		{name: "ALLOW ALL becomes ALLOW READ", in: acl("ALLOW", "ALL", "LITERAL", "orders", "User:alice"),
			want: ptr(acl("ALLOW", "READ", "LITERAL", "A.orders", "User:alice"))},
		{name: "ALLOW WRITE is not synced", in: acl("ALLOW", "WRITE", "LITERAL", "orders", "User:bob")},
		{name: "lower case: allow write is not synced either", in: acl("allow", "write", "LITERAL", "orders", "User:bob")},
		{name: "ALLOW DESCRIBE is copied", in: acl("ALLOW", "DESCRIBE", "LITERAL", "orders", "User:alice"),
			want: ptr(acl("ALLOW", "DESCRIBE", "LITERAL", "A.orders", "User:alice"))},
		{name: "DENY WRITE is copied", in: acl("DENY", "WRITE", "LITERAL", "orders", "User:bob"),
			want: ptr(acl("DENY", "WRITE", "LITERAL", "A.orders", "User:bob"))},
		{name: "DENY ALL is copied as it is", in: acl("DENY", "ALL", "LITERAL", "orders", "User:bob"),
			want: ptr(acl("DENY", "ALL", "LITERAL", "A.orders", "User:bob"))},
		{name: "PREFIXED is not synced", in: acl("ALLOW", "READ", "PREFIXED", "ord", "User:alice")},
		{name: "a GROUP binding is not synced", in: group},
		{name: "a topic the flow does not select", in: acl("ALLOW", "READ", "LITERAL", "skip-me", "User:alice")},
		{name: "a topic that came from the target (cycle)", in: acl("ALLOW", "READ", "LITERAL", "B.orders", "User:alice")},
		{name: "an internal topic", in: acl("ALLOW", "READ", "LITERAL", "__consumer_offsets", "User:alice")},
		{name: "IdentityReplicationPolicy keeps the name", identity: true, in: acl("ALLOW", "ALL", "LITERAL", "orders", "User:alice"),
			want: ptr(acl("ALLOW", "READ", "LITERAL", "orders", "User:alice"))},
		{name: "source.cluster.alias names the remote topic", change: alias, in: acl("ALLOW", "READ", "LITERAL", "orders", "User:alice"),
			want: ptr(acl("ALLOW", "READ", "LITERAL", "east.orders", "User:alice"))},
		{name: "a remote topic of another cluster is renamed again", in: acl("ALLOW", "READ", "LITERAL", "C.orders", "User:alice"),
			want: ptr(acl("ALLOW", "READ", "LITERAL", "A.C.orders", "User:alice"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testFlow(t, tc.identity, tc.change)
			got, ok := TargetACL(f, tc.in)
			switch {
			case tc.want == nil && ok:
				t.Errorf("synced as %s, want not synced", got)
			case tc.want != nil && !ok:
				t.Errorf("not synced, want %s", *tc.want)
			case tc.want != nil && got != *tc.want:
				t.Errorf("synced as %s, want %s", got, *tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestDesiredACLs(t *testing.T) {
	f := testFlow(t, false, nil)
	src := []cluster.ACL{
		acl("ALLOW", "READ", "LITERAL", "orders", "User:alice"),
		acl("ALLOW", "READ", "LITERAL", "*", "User:carol"),        // the wildcard: not a replicated topic
		acl("ALLOW", "READ", "LITERAL", "payments", "User:alice"), // selected, not replicated yet
		acl("ALLOW", "WRITE", "LITERAL", "orders", "User:bob"),
		acl("DENY", "READ", "LITERAL", "orders", "User:mallory"),
		acl("ALLOW", "ALL", "PREFIXED", "ord", "User:dave"),
	}
	replicated := func(topic string) bool { return topic == "orders" }
	want := []cluster.ACL{acl("ALLOW", "READ", "LITERAL", "A.orders", "User:alice"), acl("DENY", "READ", "LITERAL", "A.orders", "User:mallory")}
	if got := DesiredACLs(f, src, replicated); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if got := DesiredACLs(f, nil, replicated); got != nil {
		t.Errorf("no source ACLs: %v", got)
	}
}

func TestCompareACLs(t *testing.T) {
	readA := acl("ALLOW", "READ", "LITERAL", "orders", "User:alice")
	for _, tc := range []struct {
		name           string
		source, target []cluster.ACL
		read, write    []string
		pairs          int
		remote         string
	}{
		{name: "no ACL on the source"},
		{name: "only other topics' and non READ/WRITE ACLs", source: []cluster.ACL{
			acl("ALLOW", "READ", "LITERAL", "payments", "User:alice"), acl("ALLOW", "DESCRIBE", "LITERAL", "orders", "User:alice"),
			acl("DENY", "READ", "LITERAL", "orders", "User:bob")}},
		{name: "READ missing on the target", source: []cluster.ACL{readA}, read: []string{"User:alice"}, pairs: 1},
		{name: "READ granted on the remote topic", source: []cluster.ACL{readA}, target: []cluster.ACL{acl("ALLOW", "READ", "LITERAL", "A.orders", "User:alice")}, pairs: 1},
		{name: "granted on the source topic's name, not the remote topic's", source: []cluster.ACL{readA},
			target: []cluster.ACL{acl("ALLOW", "READ", "LITERAL", "orders", "User:alice")}, read: []string{"User:alice"}, pairs: 1},
		{name: "ALL on the target covers READ", source: []cluster.ACL{readA}, target: []cluster.ACL{acl("ALLOW", "ALL", "LITERAL", "A.orders", "User:alice")}, pairs: 1},
		{name: "User:* on the target covers everyone", source: []cluster.ACL{readA}, target: []cluster.ACL{acl("ALLOW", "READ", "LITERAL", "A.orders", "User:*")}, pairs: 1},
		{name: "a PREFIXED ACL on the target covers", source: []cluster.ACL{readA}, target: []cluster.ACL{acl("ALLOW", "READ", "PREFIXED", "A.", "User:alice")}, pairs: 1},
		{name: "a LITERAL * ACL on the target covers", source: []cluster.ACL{readA}, target: []cluster.ACL{acl("ALLOW", "READ", "LITERAL", "*", "User:alice")}, pairs: 1},
		{name: "a DENY on the target is not an ALLOW", source: []cluster.ACL{readA}, target: []cluster.ACL{acl("DENY", "READ", "LITERAL", "A.orders", "User:alice")},
			read: []string{"User:alice"}, pairs: 1},
		{name: "ALL on the source: READ synced, WRITE missing", source: []cluster.ACL{acl("ALLOW", "ALL", "LITERAL", "orders", "User:alice")},
			target: []cluster.ACL{acl("ALLOW", "READ", "LITERAL", "A.orders", "User:alice")}, write: []string{"User:alice"}, pairs: 2},
		{name: "WRITE missing", source: []cluster.ACL{acl("ALLOW", "WRITE", "LITERAL", "orders", "User:bob")}, write: []string{"User:bob"}, pairs: 1},
		{name: "PREFIXED and * on the source count", source: []cluster.ACL{acl("ALLOW", "READ", "PREFIXED", "ord", "User:carol"), acl("ALLOW", "READ", "LITERAL", "*", "User:alice")},
			read: []string{"User:alice", "User:carol"}, pairs: 2},
		{name: "a PREFIXED ACL of another prefix does not apply", source: []cluster.ACL{acl("ALLOW", "READ", "PREFIXED", "pay", "User:carol")}},
		{name: "duplicates counted once, principals sorted", source: []cluster.ACL{
			acl("ALLOW", "READ", "LITERAL", "orders", "User:zed"), readA, readA, acl("ALLOW", "ALL", "PREFIXED", "o", "User:alice")},
			read: []string{"User:alice", "User:zed"}, write: []string{"User:alice"}, pairs: 3},
		{name: "IdentityReplicationPolicy: the remote topic has the same name", remote: "orders", source: []cluster.ACL{readA}, target: []cluster.ACL{readA}, pairs: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote := "A.orders"
			if tc.remote != "" {
				remote = tc.remote
			}
			got := CompareACLs("orders", remote, tc.source, tc.target)
			if !reflect.DeepEqual(got.MissingRead, tc.read) || !reflect.DeepEqual(got.MissingWrite, tc.write) || got.Pairs != tc.pairs {
				t.Errorf("got read %q write %q pairs %d, want read %q write %q pairs %d", got.MissingRead, got.MissingWrite, got.Pairs, tc.read, tc.write, tc.pairs)
			}
		})
	}
}

// What the sync creates, verify finds: after DesiredACLs are created on an empty target, no
// principal of a LITERAL source binding misses READ, and WRITE (never synced) is what is left.
func TestSyncedACLsCoverRead(t *testing.T) {
	for _, identity := range []bool{false, true} {
		f := testFlow(t, identity, nil)
		src := []cluster.ACL{
			acl("ALLOW", "READ", "LITERAL", "orders", "User:alice"),
			acl("ALLOW", "ALL", "LITERAL", "orders", "User:carol"),
			acl("ALLOW", "WRITE", "LITERAL", "orders", "User:bob"),
			acl("DENY", "WRITE", "LITERAL", "orders", "User:mallory"),
		}
		remote := f.RemoteTopic("orders")
		before := CompareACLs("orders", remote, src, nil)
		if !reflect.DeepEqual(before.MissingRead, []string{"User:alice", "User:carol"}) {
			t.Fatalf("identity %v: before the sync: %+v", identity, before)
		}
		tgt := DesiredACLs(f, src, func(topic string) bool { return topic == "orders" })
		after := CompareACLs("orders", remote, src, tgt)
		if len(after.MissingRead) != 0 || !reflect.DeepEqual(after.MissingWrite, []string{"User:bob", "User:carol"}) || after.Pairs != 4 {
			t.Errorf("identity %v: after the sync: %+v (target %v)", identity, after, tgt)
		}
	}
}
