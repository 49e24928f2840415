package rdkafka

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// Denied is a broker's refusal of an operation for lack of an ACL: which cluster refused which
// principal which operation on which resource. Its kind is kerr.Unreachable (exit 4: the cluster
// cannot be used as configured) and its hint is the kafka-acls command that grants the right.
type Denied struct {
	Cluster      string // the cluster's alias (or the copier's name when unknown)
	Bootstrap    string
	Principal    string // e.g. User:alice, User:CN=replicator; "" when kmm cannot tell
	Operation    string // Kafka ACL operation: Read, Write, Describe, …
	ResourceType string // topic, group, cluster, transactional-id
	Resource     string
	Err          error
}

func (d *Denied) Error() string {
	who := d.Principal
	if who == "" {
		who = "kmm's principal"
	}
	return fmt.Sprintf("cluster %s refused %s: %s lacks the ACL ALLOW %s on %s %s (%v)", d.Cluster, strings.ToUpper(d.Operation),
		who, strings.ToUpper(d.Operation), d.ResourceType, d.Resource, d.Err)
}

func (d *Denied) Unwrap() error { return d.Err }

// Hint is the command that grants the missing right.
func (d *Denied) Hint() string {
	who := d.Principal
	if who == "" {
		who = "User:<the principal kmm authenticates as>"
	}
	res := "--" + d.ResourceType + " " + d.Resource
	switch d.ResourceType {
	case "cluster":
		res = "--cluster"
	case "transactional-id":
		res = "--transactional-id " + d.Resource
	}
	boot := d.Bootstrap
	if boot == "" {
		boot = "<bootstrap>"
	}
	return fmt.Sprintf("grant it, e.g. kafka-acls.sh --bootstrap-server %s --add --allow-principal %s --operation %s %s (the rights kmm needs are MM2's: docs/security.md)",
		boot, who, d.Operation, res)
}

// IsAuthorization reports whether err carries one of the brokers' authorization codes.
func IsAuthorization(err error) bool {
	var ke kafka.Error
	if !errors.As(err, &ke) {
		return false
	}
	switch ke.Code() {
	case kafka.ErrTopicAuthorizationFailed, kafka.ErrGroupAuthorizationFailed, kafka.ErrClusterAuthorizationFailed,
		kafka.ErrTransactionalIDAuthorizationFailed:
		return true
	}
	return false
}

// Deny returns err as a *Denied (kind kerr.Unreachable, with the granting command as hint) when
// it is an authorization failure, else err unchanged. cfg is the librdkafka configuration of the
// client that was refused (for the bootstrap and the principal).
func Deny(err error, cluster string, cfg Config, op, resourceType, resource string) error {
	if err == nil || !IsAuthorization(err) {
		return err
	}
	var ke kafka.Error
	if errors.As(err, &ke) {
		switch ke.Code() {
		case kafka.ErrClusterAuthorizationFailed:
			resourceType, resource = "cluster", "kafka-cluster"
		case kafka.ErrGroupAuthorizationFailed:
			if resourceType != "group" {
				resourceType, resource = "group", "(the group)"
			}
		case kafka.ErrTransactionalIDAuthorizationFailed:
			resourceType = "transactional-id"
		}
	}
	d := &Denied{Cluster: cluster, Bootstrap: cfg["bootstrap.servers"], Principal: PrincipalOf(cfg), Operation: op,
		ResourceType: resourceType, Resource: resource, Err: err}
	return kerr.WithHint(kerr.Wrap(kerr.Unreachable, d), d.Hint())
}

// PrincipalOf is the Kafka principal a client with cfg authenticates as, as far as its settings
// tell: User:<sasl.username> for PLAIN and SCRAM, User:<certificate subject> for a TLS client
// certificate (Kafka's default SSL principal), User:ANONYMOUS for PLAINTEXT; "" otherwise.
func PrincipalOf(cfg Config) string {
	proto := strings.ToUpper(cfg["security.protocol"])
	mech := strings.ToUpper(cfg["sasl.mechanism"])
	if mech == "" {
		mech = strings.ToUpper(cfg["sasl.mechanisms"])
	}
	switch {
	case strings.HasPrefix(proto, "SASL") && (mech == "PLAIN" || strings.HasPrefix(mech, "SCRAM")) && cfg["sasl.username"] != "":
		return "User:" + cfg["sasl.username"]
	case proto == "SSL":
		pemText := cfg["ssl.certificate.pem"]
		if pemText == "" && cfg["ssl.certificate.location"] != "" {
			b, err := os.ReadFile(cfg["ssl.certificate.location"])
			if err == nil {
				pemText = string(b)
			}
		}
		if blk, _ := pem.Decode([]byte(pemText)); blk != nil {
			if c, err := x509.ParseCertificate(blk.Bytes); err == nil {
				return "User:" + c.Subject.String()
			}
		}
		return ""
	case proto == "" || proto == "PLAINTEXT":
		return "User:ANONYMOUS"
	}
	return ""
}
