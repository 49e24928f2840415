package rdkafka

import (
	"context"
	"fmt"

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
	res, err := a.a.CreateACLs(ctx, bs)
	if err != nil {
		return a.wrap("create acls", err)
	}
	for i, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			return a.wrap("create acl "+acls[i].String(), r.Error)
		}
	}
	return nil
}

// DescribeTopicACLs returns every ACL on TOPIC resources of any name and pattern type.
func (a *Admin) DescribeTopicACLs(ctx context.Context) ([]ACL, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	f := kafka.ACLBindingFilter{Type: kafka.ResourceTopic, ResourcePatternType: kafka.ResourcePatternTypeAny,
		Operation: kafka.ACLOperationAny, PermissionType: kafka.ACLPermissionTypeAny}
	res, err := a.a.DescribeACLs(ctx, f)
	if err != nil {
		return nil, a.wrap("describe acls", err)
	}
	if res.Error.Code() != kafka.ErrNoError {
		return nil, a.wrap("describe acls", res.Error)
	}
	out := make([]ACL, 0, len(res.ACLBindings))
	for _, b := range res.ACLBindings {
		out = append(out, fromBinding(b))
	}
	return out, nil
}

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
	res, err := a.a.DeleteACLs(ctx, fs)
	if err != nil {
		return a.wrap("delete acls", err)
	}
	for i, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			return a.wrap("delete acl "+acls[i].String(), r.Error)
		}
	}
	return nil
}
