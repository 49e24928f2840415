package metasync

import (
	"slices"
	"strings"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
)

// Kafka's names, as the cluster seam carries them.
const (
	opRead, opWrite, opAll = "READ", "WRITE", "ALL"
	allow                  = "ALLOW"
	literal, prefixed      = "LITERAL", "PREFIXED"
	topicResource          = "TOPIC"
	anyPrincipal           = "User:*"
	anyTopic               = "*"
)

// allowedOnTarget is the operation the ACL sync grants on a remote topic for an ALLOW of op on
// its source topic, or "" for none: WRITE is never granted (only the replicator writes remote
// topics), ALL becomes READ, any other operation is granted as it is.
func allowedOnTarget(op string) string {
	switch {
	case strings.EqualFold(op, opWrite):
		return ""
	case strings.EqualFold(op, opAll):
		return opRead
	}
	return op
}

// TargetACL is the binding flow f's ACL sync creates on the target for source binding b, and
// whether it creates one: b must be a LITERAL TOPIC binding of a topic the flow selects, and
// not an ALLOW WRITE; the remote topic's name is the flow's (Flow.RemoteTopic); an ALLOW ALL
// becomes an ALLOW READ; a DENY is copied as it is.
func TargetACL(f *flow.Flow, b cluster.ACL) (cluster.ACL, bool) {
	if !strings.EqualFold(b.ResourceType, topicResource) || !strings.EqualFold(b.PatternType, literal) || !f.Selected(b.ResourceName) {
		return cluster.ACL{}, false
	}
	nb := b
	nb.ResourceType, nb.PatternType = topicResource, literal
	nb.ResourceName = f.RemoteTopic(b.ResourceName)
	if strings.EqualFold(b.Permission, allow) {
		if nb.Operation = allowedOnTarget(b.Operation); nb.Operation == "" {
			return cluster.ACL{}, false
		}
	}
	return nb, true
}

// DesiredACLs is what flow f's ACL sync creates on the target (additively: nothing is removed)
// from source bindings described for the replicated topics, in their order. Only bindings
// naming a replicated topic are copied (replicated: the engine's replicated source topics): a
// LITERAL "*" binding, which MM2 also copies when its topic filter accepts the name "*", is not.
func DesiredACLs(f *flow.Flow, source []cluster.ACL, replicated func(topic string) bool) []cluster.ACL {
	var out []cluster.ACL
	for _, b := range source {
		if !replicated(b.ResourceName) {
			continue
		}
		if nb, ok := TargetACL(f, b); ok {
			out = append(out, nb)
		}
	}
	return out
}

// ACLCoverage is what verify checks of a topic's ACLs: that every principal allowed to READ or
// WRITE the source topic (by a LITERAL, PREFIXED or "*" ALLOW binding of READ, WRITE or ALL) is
// allowed to on the remote topic, directly or through "User:*".
type ACLCoverage struct {
	// MissingRead: principals that may READ the source topic but not the remote topic, sorted.
	// The sync grants READ (a LITERAL binding's; PREFIXED and "*" ones must be granted on the
	// target by hand): a failover would leave these consumers without their topic.
	MissingRead []string
	// MissingWrite: the same for WRITE, which the sync never grants: producers need it granted
	// on the target before they fail over.
	MissingWrite []string
	// Pairs is the number of principal/operation (READ, WRITE) pairs allowed on the source.
	Pairs int
}

// CompareACLs checks that the principals allowed on source topic topic are allowed on its
// remote topic remote. source and target may hold the bindings of other topics too.
func CompareACLs(topic, remote string, source, target []cluster.ACL) ACLCoverage {
	var c ACLCoverage
	seen := map[string]bool{}
	for _, a := range source {
		if !strings.EqualFold(a.Permission, allow) || !applies(a, topic) {
			continue
		}
		for _, op := range []string{opRead, opWrite} {
			if !grants(a.Operation, op) || seen[a.Principal+op] {
				continue
			}
			seen[a.Principal+op] = true
			if allows(target, remote, a.Principal, op) {
				continue
			}
			// Which list is which is the sync's rule: what it grants on the target is a
			// failure to find missing, what it never grants a warning.
			if allowedOnTarget(op) == op {
				c.MissingRead = append(c.MissingRead, a.Principal)
			} else {
				c.MissingWrite = append(c.MissingWrite, a.Principal)
			}
		}
	}
	slices.Sort(c.MissingRead)
	slices.Sort(c.MissingWrite)
	c.Pairs = len(seen)
	return c
}

// allows reports whether an ALLOW binding among acls lets principal (or everyone) do op on topic.
func allows(acls []cluster.ACL, topic, principal, op string) bool {
	for _, a := range acls {
		if strings.EqualFold(a.Permission, allow) && (a.Principal == principal || a.Principal == anyPrincipal) && grants(a.Operation, op) && applies(a, topic) {
			return true
		}
	}
	return false
}

// grants reports whether a binding of operation have allows op (ALL allows every operation).
func grants(have, op string) bool {
	return strings.EqualFold(have, op) || strings.EqualFold(have, opAll)
}

// applies reports whether binding a's resource pattern matches topic: LITERAL of its name or of
// "*", PREFIXED of a prefix of it.
func applies(a cluster.ACL, topic string) bool {
	switch {
	case strings.EqualFold(a.PatternType, literal):
		return a.ResourceName == anyTopic || a.ResourceName == topic
	case strings.EqualFold(a.PatternType, prefixed):
		return strings.HasPrefix(topic, a.ResourceName)
	}
	return false
}
