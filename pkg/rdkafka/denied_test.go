package rdkafka

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/pkg/kerr"
)

func TestPrincipalOf(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "replicator", Organization: []string{"ops"}},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bob", "sasl.password": "x"}, "User:bob"},
		{Config{"security.protocol": "sasl_plaintext", "sasl.mechanisms": "PLAIN", "sasl.username": "alice"}, "User:alice"},
		{Config{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, ""},
		{Config{"security.protocol": "SSL", "ssl.certificate.pem": certPEM}, "User:CN=replicator,O=ops"},
		{Config{"security.protocol": "SSL"}, ""},
		{Config{}, "User:ANONYMOUS"},
	} {
		if got := PrincipalOf(c.cfg); got != c.want {
			t.Errorf("PrincipalOf(%v) = %q, want %q", c.cfg["security.protocol"], got, c.want)
		}
	}
}

// An authorization failure becomes exit 4 naming the principal, the operation and the resource,
// with the kafka-acls command as hint; other errors pass unchanged; the password never shows.
func TestDeny(t *testing.T) {
	cfg := Config{"bootstrap.servers": "b:9093", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "bob", "sasl.password": "pw-123"}
	authz := fmt.Errorf("produce to t[0]: %w", kafka.NewError(kafka.ErrTopicAuthorizationFailed, "Broker: Topic authorization failed", false))
	err := Deny(authz, "B", cfg, "Write", "topic", "A.orders")
	if kerr.KindOf(err) != kerr.Unreachable {
		t.Fatalf("kind %v, want unreachable (exit 4)", kerr.KindOf(err))
	}
	msg, hint := err.Error(), kerr.HintOf(err)
	for _, want := range []string{"cluster B refused WRITE", "User:bob lacks the ACL ALLOW WRITE on topic A.orders", "Topic authorization failed"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if want := "kafka-acls.sh --bootstrap-server b:9093 --add --allow-principal User:bob --operation Write --topic A.orders"; !strings.Contains(hint, want) {
		t.Errorf("hint %q lacks %q", hint, want)
	}
	if strings.Contains(msg+hint, "pw-123") {
		t.Error("the password shows")
	}
	grp := kafka.NewError(kafka.ErrGroupAuthorizationFailed, "Group authorization failed", false)
	if h := kerr.HintOf(Deny(grp, "B", cfg, "Read", "topic", "x")); !strings.Contains(h, "--group (the group)") {
		t.Errorf("group refusal hint %q", h)
	}
	cl := kafka.NewError(kafka.ErrClusterAuthorizationFailed, "Cluster authorization failed", false)
	if h := kerr.HintOf(Deny(cl, "B", cfg, "Alter", "topic", "x")); !strings.Contains(h, "--operation Alter --cluster") {
		t.Errorf("cluster refusal hint %q", h)
	}
	other := fmt.Errorf("boom: %w", kafka.NewError(kafka.ErrMsgSizeTooLarge, "too large", false))
	if got := Deny(other, "B", cfg, "Write", "topic", "x"); got != other {
		t.Errorf("a non-authorization error changed: %v", got)
	}
}
