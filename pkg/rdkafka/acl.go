package rdkafka

import (
	"context"
	"fmt"
	"sync"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

func toBinding(b ACL) (kafka.ACLBinding, error) {
	rt, err := kafka.ResourceTypeFromString(b.ResourceType)
	if err != nil {
		return kafka.ACLBinding{}, err
	}
	pt, err := kafka.ResourcePatternTypeFromString(b.PatternType)
	if err != nil {
		return kafka.ACLBinding{}, err
	}
	op, err := kafka.ACLOperationFromString(b.Operation)
	if err != nil {
		return kafka.ACLBinding{}, err
	}
	perm, err := kafka.ACLPermissionTypeFromString(b.Permission)
	if err != nil {
		return kafka.ACLBinding{}, err
	}
	return kafka.ACLBinding{Type: rt, Name: b.ResourceName, ResourcePatternType: pt, Principal: b.Principal, Host: b.Host, Operation: op, PermissionType: perm}, nil
}

func fromBinding(b kafka.ACLBinding) ACL {
	return ACL{ResourceType: b.Type.String(), ResourceName: b.Name, PatternType: b.ResourcePatternType.String(),
		Principal: b.Principal, Host: b.Host, Operation: b.Operation.String(), Permission: b.PermissionType.String()}
}

// CreateACLs creates bindings (idempotent on the broker).
func (a *Admin) CreateACLs(ctx context.Context, acls []ACL) error {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	bs := make(kafka.ACLBindings, 0, len(acls))
	for _, b := range acls {
		kb, err := toBinding(b)
		if err != nil {
			return fmt.Errorf("%s: acl %s: %w", a.name, b, err)
		}
		bs = append(bs, kb)
	}
	return aclChunks(len(bs), func(from, to int) error {
		res, err := a.a.CreateACLs(ctx, bs[from:to])
		if err != nil {
			return a.wrap("create acls", err)
		}
		for i, r := range res {
			if r.Error.Code() != kafka.ErrNoError {
				return a.wrap("create acl "+acls[from+i].String(), r.Error)
			}
		}
		return nil
	})
}

// aclsPerRequest: CreateACLs and DeleteACLs send at most this many bindings (filters) per
// request. A KRaft controller refuses a request that would write more than 10,000 records
// (BoundedListTooLongException, the whole request refused), and Kafka 4.1's broker then held
// its forwarding channel to the controller until the 30 s request timeout, so every other
// admin request that broker forwarded (CreateTopics...) waited too.
const aclsPerRequest = 1000

// aclChunks calls do for [from, to) ranges of n items, aclsPerRequest at a time, until one fails.
func aclChunks(n int, do func(from, to int) error) error {
	for from := 0; from < n; from += aclsPerRequest {
		if err := do(from, min(from+aclsPerRequest, n)); err != nil {
			return err
		}
	}
	return nil
}

// DescribeTopicACLs returns the ACLs that apply to the named topics: for each topic, what a
// MATCH filter finds (LITERAL bindings on its name, the LITERAL wildcard "*", PREFIXED bindings
// on a prefix of it), each binding once. One DescribeAcls request per topic, describeACLsAtOnce
// at a time: librdkafka (2.11) copies every string of a DescribeAcls response onto its main
// thread's stack (alloca in the parse loop), and a cluster's ~150,000 topic ACLs overflowed that
// 8 MiB stack — a segmentation fault that ended the process — so kmm never asks for every ACL
// of a cluster at once.
func (a *Admin) DescribeTopicACLs(ctx context.Context, topics []string) ([]ACL, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	type result struct {
		acls []ACL
		err  error
	}
	results := make([]result, len(topics))
	sem := make(chan struct{}, describeACLsAtOnce)
	var wg sync.WaitGroup
	for i, t := range topics {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i].err = a.wrap("describe acls", ctx.Err())
				return
			}
			defer func() { <-sem }()
			f := kafka.ACLBindingFilter{Type: kafka.ResourceTopic, Name: t, ResourcePatternType: kafka.ResourcePatternTypeMatch,
				Operation: kafka.ACLOperationAny, PermissionType: kafka.ACLPermissionTypeAny}
			res, err := a.a.DescribeACLs(ctx, f)
			if err == nil && res.Error.Code() != kafka.ErrNoError {
				err = res.Error
			}
			if err != nil {
				results[i].err = a.wrap("describe acls of topic "+t, err)
				return
			}
			for _, b := range res.ACLBindings {
				results[i].acls = append(results[i].acls, fromBinding(b))
			}
		}()
	}
	wg.Wait()
	seen := map[ACL]bool{}
	var out []ACL
	for _, r := range results {
		if r.err != nil {
			return nil, r.err
		}
		for _, b := range r.acls {
			if !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// describeACLsAtOnce bounds DescribeTopicACLs' requests in flight.
const describeACLsAtOnce = 8

// DeleteACLs deletes exactly the given bindings (failback removes the DENY ACLs of failover's
// fence with it; tests clean up the ACLs they create on a shared bed).
func (a *Admin) DeleteACLs(ctx context.Context, acls ...ACL) error {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	fs := make(kafka.ACLBindingFilters, 0, len(acls))
	for _, b := range acls {
		kb, err := toBinding(b)
		if err != nil {
			return fmt.Errorf("%s: acl %s: %w", a.name, b, err)
		}
		fs = append(fs, kb)
	}
	return aclChunks(len(fs), func(from, to int) error {
		res, err := a.a.DeleteACLs(ctx, fs[from:to])
		if err != nil {
			return a.wrap("delete acls", err)
		}
		for i, r := range res {
			if r.Error.Code() != kafka.ErrNoError {
				return a.wrap("delete acl "+acls[from+i].String(), r.Error)
			}
		}
		return nil
	})
}
