package rdkafka

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A broker that answers OffsetFetch with a group-level NOT_COORDINATOR (a group coordinator
// moving or loading) must give kmm an error or a retry, never a crash: librdkafka (2.11 to at
// least 2.15) re-queries the coordinator through the client's consumer group handle, which an
// admin client derived from a producer does not have — a NULL dereference on librdkafka's
// thread, exit 139 with no Go trace (before the fix this test died with SIGSEGV).
func TestListGroupOffsetsNotCoordinator(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int64 // OffsetFetch requests answered NOT_COORDINATOR before the real answer
	}{{"moving", 2}, {"stuck", 1 << 40}} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var seen atomic.Int64
			c.ControlKey(int16(kmsg.OffsetFetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				if seen.Add(1) > tc.failures {
					return nil, nil, false // kfake answers
				}
				r := req.(*kmsg.OffsetFetchRequest)
				resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
				resp.ErrorCode = 16 // NOT_COORDINATOR
				for _, g := range r.Groups {
					rg := kmsg.NewOffsetFetchResponseGroup()
					rg.Group, rg.ErrorCode = g.Group, 16
					resp.Groups = append(resp.Groups, rg)
				}
				return resp, nil, true
			})
			adm, err := NewAdmin("cluster A", Config{"bootstrap.servers": c.ListenAddrs()[0], "enable.metrics.push": "false"})
			if err != nil {
				t.Fatal(err)
			}
			defer adm.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			offs, err := adm.ListGroupOffsets(ctx, "g1")
			t.Logf("ListGroupOffsets after %d OffsetFetch requests: %v %v", seen.Load(), offs, err)
			if tc.name == "moving" {
				if err != nil || seen.Load() != 3 {
					t.Fatalf("a coordinator that answers on the 3rd request: err %v after %d requests", err, seen.Load())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "Not coordinator") {
				t.Fatalf("a coordinator that never answers: err %v, want Not coordinator", err)
			}
		})
	}
}
