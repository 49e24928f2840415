package groupprobe_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/groupprobe"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// A live group is seen with its member, over PLAINTEXT and over SASL/SCRAM; an unknown group is
// Dead with no members.
func TestRealDescribe(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := context.Background()
	topic, group := testbed.Unique(t, "gp"), testbed.Unique(t, "g")
	bed.A.CreateTopic(t, topic, 1, nil)
	c, err := rdkafka.NewConsumer("A", rdkafka.Config{"bootstrap.servers": bed.A.Bootstrap, "group.id": group, "session.timeout.ms": "10000"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Subscribe(topic); err != nil {
		t.Fatal(err)
	}
	sasl := map[string]string{"bootstrap.servers": bed.A.SASL, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "SCRAM-SHA-512",
		"sasl.username": "admin", "sasl.password": "admin-secret"}
	for _, cfg := range []map[string]string{{"bootstrap.servers": bed.A.Bootstrap}, sasl} {
		testbed.Eventually(t, 30*time.Second, func() error {
			_, _ = c.Poll(ctx, 10, 100*time.Millisecond)
			g, err := groupprobe.Describe(ctx, cfg, group)
			if err != nil || g.Members != 1 || g.ProtocolType != "consumer" {
				return fmt.Errorf("%+v %v", g, err)
			}
			return nil
		})
	}
	g, err := groupprobe.Describe(ctx, map[string]string{"bootstrap.servers": bed.A.Bootstrap}, "no-such-"+group)
	if err != nil || g.Members != 0 {
		t.Fatalf("unknown group: %+v %v", g, err)
	}
	if _, err := groupprobe.Describe(ctx, map[string]string{"bootstrap.servers": bed.A.SASL, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "OAUTHBEARER"}, group); err == nil {
		t.Fatal("OAUTHBEARER should be unsupported")
	}
}
