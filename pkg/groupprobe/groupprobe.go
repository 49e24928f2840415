// Package groupprobe describes classic groups of any protocol type, including Kafka Connect's
// worker groups, which librdkafka's DescribeConsumerGroups refuses ("not a consumer group").
// kmm uses it for one question: does Apache MM2 (Connect group <S>-mm2) run a flow right now?
// It speaks the Kafka protocol through franz-go's admin client with the cluster's librdkafka
// settings (TLS from in-memory PEM, SASL PLAIN/SCRAM). It must not do anything else.
package groupprobe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/twmb/franz-go/pkg/kadm"
	fkerr "github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// ErrUnsupported is returned for security settings this probe cannot reproduce (e.g.
// OAUTHBEARER); the caller should then say it could not check.
var ErrUnsupported = errors.New("group probe: security settings not supported")

// Group is a described group.
type Group struct {
	State        string
	ProtocolType string // "connect" for Kafka Connect / MM2 workers
	Members      int
}

// Describe describes group on the cluster reached with the librdkafka settings cfg.
func Describe(ctx context.Context, cfg map[string]string, group string) (Group, error) {
	opts, err := options(cfg)
	if err != nil {
		return Group{}, err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return Group{}, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	ds, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
	if err != nil {
		return Group{}, err
	}
	d, ok := ds[group]
	if !ok {
		return Group{State: "Dead"}, nil
	}
	if errors.Is(d.Err, fkerr.GroupIDNotFound) {
		return Group{State: "Dead"}, nil
	}
	if d.Err != nil {
		return Group{}, d.Err
	}
	return Group{State: d.State, ProtocolType: d.ProtocolType, Members: len(d.Members)}, nil
}

func options(cfg map[string]string) ([]kgo.Opt, error) {
	boot := strings.Split(cfg["bootstrap.servers"], ",")
	for i := range boot {
		boot[i] = strings.TrimSpace(boot[i])
	}
	opts := []kgo.Opt{kgo.SeedBrokers(boot...), kgo.DialTimeout(5 * time.Second)}
	proto := strings.ToUpper(cfg["security.protocol"])
	if proto == "" {
		proto = "PLAINTEXT"
	}
	if proto == "SSL" || proto == "SASL_SSL" {
		tc, err := tlsConfig(cfg)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if strings.HasPrefix(proto, "SASL_") {
		user, pass := cfg["sasl.username"], cfg["sasl.password"]
		switch m := strings.ToUpper(cfg["sasl.mechanisms"]); m {
		case "PLAIN", "":
			opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
		case "SCRAM-SHA-256":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
		case "SCRAM-SHA-512":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
		default:
			return nil, fmt.Errorf("%w: SASL mechanism %s", ErrUnsupported, m)
		}
	}
	return opts, nil
}

func tlsConfig(cfg map[string]string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca := cfg["ssl.ca.pem"]; ca != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(ca)) {
			return nil, fmt.Errorf("%w: unreadable ssl.ca.pem", ErrUnsupported)
		}
		tc.RootCAs = pool
	} else if cfg["ssl.ca.location"] != "" {
		return nil, fmt.Errorf("%w: ssl.ca.location", ErrUnsupported)
	}
	if c, k := cfg["ssl.certificate.pem"], cfg["ssl.key.pem"]; c != "" && k != "" {
		pair, err := tls.X509KeyPair([]byte(c), []byte(k))
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	if strings.EqualFold(cfg["ssl.endpoint.identification.algorithm"], "none") {
		// Verify the chain but not the host name, as librdkafka does with "none".
		roots := tc.RootCAs
		tc.InsecureSkipVerify = true
		tc.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("no server certificate")
			}
			certs := make([]*x509.Certificate, len(raw))
			for i, r := range raw {
				c, err := x509.ParseCertificate(r)
				if err != nil {
					return err
				}
				certs[i] = c
			}
			inter := x509.NewCertPool()
			for _, c := range certs[1:] {
				inter.AddCert(c)
			}
			_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return tc, nil
}

// Prober implements cluster.GroupProber with Describe and the side's admin settings.
type Prober struct{}

var _ cluster.GroupProber = Prober{}

// DescribeAnyGroup describes group on the given side of f.
func (Prober) DescribeAnyGroup(ctx context.Context, f *flow.Flow, side flow.Side, group string) (cluster.AnyGroup, error) {
	g, err := Describe(ctx, f.Settings(side, flow.Admin), group)
	if err != nil {
		return cluster.AnyGroup{}, err
	}
	return cluster.AnyGroup{State: g.State, ProtocolType: g.ProtocolType, Members: g.Members}, nil
}
