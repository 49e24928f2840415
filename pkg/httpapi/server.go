package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// DefaultAddr is where the server listens when New gets an empty address: loopback only, on
// Kafka Connect's default REST port so `curl http://localhost:8083/connectors` works.
const DefaultAddr = "127.0.0.1:8083"

// Options tune a Server.
type Options struct {
	// AllowRemote permits binding an address other machines can reach (a non-loopback IP, a
	// host name that resolves to one, or all interfaces such as ":8083"). Off by default
	// because the server has no authentication and no TLS.
	AllowRemote bool
	// WorkerID is the worker_id of Connect statuses (default "<hostname>:<port>").
	WorkerID string
	// Configs holds MM2's connector config per flow name "S->T" (mm2conf.FlowConfig.Connector, raw
	// values), for GET /connectors/{name}[/config]. Secret keys are hidden whatever the
	// caller passes. Flows without an entry get a minimal config.
	Configs map[string]map[string]string
	// Version and Commit are kmm's, for GET / and kmm_build_info.
	Version, Commit string
	// Now is the clock for age metrics (default time.Now).
	Now func() time.Time
	// Logger receives HTTP server errors (default: discarded).
	Logger *slog.Logger
}

// Server serves /metrics, /healthz, /readyz and the Connect-style reads for one process.
type Server struct {
	src      Source
	opts     Options
	workerID string
	ln       net.Listener
	srv      *http.Server
	handler  http.Handler
	rates    rateSampler // records/s and bytes/s of the status page
	stop     chan struct{}
	sampled  chan struct{}

	serveErr  chan error
	closeOnce sync.Once
	closeErr  error
}

// New listens on addr (DefaultAddr when empty) and serves in the background until Close.
// A malformed address, a non-loopback address without opts.AllowRemote, or a failure to bind
// is returned as a kerr.Usage error (exit 2).
func New(addr string, src Source, opts Options) (*Server, error) {
	if addr == "" {
		addr = DefaultAddr
	}
	if src == nil {
		return nil, errors.New("httpapi: nil Source")
	}
	if !opts.AllowRemote {
		if err := checkLoopback(addr); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, kerr.WithHint(kerr.Wrap(kerr.Usage, fmt.Errorf("HTTP listener: cannot listen on %s: %w", addr, err)),
			"another process (a Kafka Connect worker or another kmm?) may hold the port; choose another address")
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !opts.AllowRemote && !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, remoteError(addr, tcp.IP.String())
	}
	s := newServer(src, opts, ln.Addr())
	s.ln = ln
	var errLog *log.Logger
	if opts.Logger != nil {
		errLog = slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn)
	} else {
		errLog = log.New(discard{}, "", 0)
	}
	s.srv = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 2 * time.Minute, ErrorLog: errLog}
	s.serveErr = make(chan error, 1)
	go func() { s.serveErr <- s.srv.Serve(ln) }()
	s.stop, s.sampled = make(chan struct{}), make(chan struct{})
	go s.sample()
	return s, nil
}

func newServer(src Source, opts Options, addr net.Addr) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{src: src, opts: opts, workerID: opts.WorkerID}
	if s.workerID == "" {
		port := ""
		if tcp, ok := addr.(*net.TCPAddr); ok {
			port = fmt.Sprint(tcp.Port)
		}
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "localhost"
		}
		s.workerID = net.JoinHostPort(host, port)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		NewCollector(src, opts.Now))
	if opts.Version != "" {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kmm_build_info", Help: "1, labelled with kmm's version and commit.",
			ConstLabels: prometheus.Labels{"version": opts.Version, "commit": opts.Commit}}, func() float64 { return 1 }))
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, ErrorHandling: promhttp.ContinueOnError}))
	get := func(pattern string, h http.HandlerFunc) { mux.Handle(pattern, readOnly(h)) }
	get("/healthz", s.handleHealthz)
	get("/readyz", s.handleReadyz)
	get("/{$}", s.handleRoot)
	get("/api/status", s.handleStatus)
	get("/static/{file}", s.handleStatic)
	for _, prefix := range []string{"", "/{source}/{target}"} {
		get(prefix+"/connectors", s.handleConnectors)
		get(prefix+"/connectors/{name}", s.handleConnector)
		get(prefix+"/connectors/{name}/config", s.handleConnectorConfig)
		get(prefix+"/connectors/{name}/status", s.handleConnectorStatus)
		get(prefix+"/connectors/{name}/offsets", s.handleConnectorOffsets)
		get(prefix+"/connectors/{name}/tasks/{task}/status", s.handleTaskStatus)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
	})
	s.handler = mux
	return s
}

// Addr is the address the server listens on (the real port when New was given port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// WorkerID is the worker_id the Connect-style statuses carry.
func (s *Server) WorkerID() string { return s.workerID }

// Handler is the server's HTTP handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.handler }

// Close stops accepting connections and waits for requests in flight until ctx ends, then
// closes whatever is left. It is safe to call more than once.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.sampled
		err := s.srv.Shutdown(ctx)
		if err != nil {
			err = errors.Join(err, s.srv.Close())
		}
		if serr := <-s.serveErr; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		s.closeErr = err
	})
	return s.closeErr
}

// GET /healthz: the process is alive and serving.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readiness is the /readyz body.
type readiness struct {
	Status   string        `json:"status"` // "ready" or "not ready"
	Flows    int           `json:"flows"`
	Reasons  []string      `json:"reasons,omitempty"`
	Clusters []clusterView `json:"clusters,omitempty"`
}

// GET /readyz: 200 when every flow runs and moves; 503 with the reasons otherwise: a flow
// failed or not running, a cluster a flow needs unreachable (since when, and why), a flow
// stalled. /healthz stays 200 meanwhile: the process is alive and retrying.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	flows := s.src.Stats()
	now := s.opts.Now()
	rd := readiness{Status: "ready", Flows: len(flows), Clusters: clustersOf(flows, now)}
	if len(flows) == 0 {
		rd.Reasons = append(rd.Reasons, "no flows: replication has not started")
	}
	for _, c := range rd.Clusters {
		if !c.Up {
			rd.Reasons = append(rd.Reasons, c.unreachable(now)+"; needed by "+strings.Join(c.Flows, ", "))
		}
	}
	for _, f := range flows {
		switch {
		case f.Err != "":
			rd.Reasons = append(rd.Reasons, fmt.Sprintf("flow %s failed: %s", f.Name(), f.Err))
		case !f.Running:
			rd.Reasons = append(rd.Reasons, fmt.Sprintf("flow %s is not running (starting, draining or stopped)", f.Name()))
		case f.Stall != nil && f.Stall.Stalled:
			rd.Reasons = append(rd.Reasons, stalled(f))
		}
	}
	code := http.StatusOK
	if len(rd.Reasons) > 0 {
		rd.Status, code = "not ready", http.StatusServiceUnavailable
	}
	writeJSON(w, code, rd)
}

// GET /: in a browser (Accept: text/html) the status page; otherwise like Connect's root
// resource, minus kafka_cluster_id (kmm spans several clusters).
func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("fragment") {
		s.handlePage(w, r, true)
		return
	}
	if wantsHTML(r) {
		s.handlePage(w, r, false)
		return
	}
	w.Header().Set("Vary", "Accept")
	writeJSON(w, http.StatusOK, map[string]string{"version": s.opts.Version, "commit": s.opts.Commit})
}

// sampleEvery is how often the server samples the flows' totals for the status page's rates.
const sampleEvery = 5 * time.Second

// sample records the flows' acknowledged totals every sampleEvery until Close, so the status
// page has records/s and bytes/s from its first request.
func (s *Server) sample() {
	defer close(s.sampled)
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.rates.observe(s.opts.Now(), flowTotals(s.src.Stats()))
		}
	}
}

// readOnly answers methods other than GET and HEAD with Connect's error shape.
func readOnly(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed: kmm's Connect-style API is read-only; connectors come from the MM2 properties file")
			return
		}
		h(w, r)
	})
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, connectError{ErrorCode: code, Message: msg})
}

// writeJSON writes v compactly, without HTML escaping (connector names contain "->").
func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// checkLoopback refuses addresses other machines could reach. The server has no
// authentication: /connectors/{name}/config shows topology and client settings, and /metrics
// topic names, so exposing it is an explicit choice (Options.AllowRemote).
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return kerr.WithHint(kerr.Wrap(kerr.Usage, fmt.Errorf("HTTP listener: bad address %q: %w", addr, err)), "give host:port, e.g. "+DefaultAddr)
	}
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i] // IPv6 zone
	}
	switch {
	case h == "":
		return remoteError(addr, "all interfaces")
	case strings.EqualFold(h, "localhost"):
		return nil
	}
	if ip := net.ParseIP(h); ip != nil {
		if ip.IsLoopback() {
			return nil
		}
		return remoteError(addr, ip.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, h)
	if err != nil {
		return kerr.Wrap(kerr.Usage, fmt.Errorf("HTTP listener: cannot resolve %s: %w", h, err))
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return remoteError(addr, ip.IP.String())
		}
	}
	return nil
}

// ErrNotLoopback is in the chain of New's error for an address other machines could reach
// (errors.Is), so the command can name its flag in a hint of its own.
var ErrNotLoopback = errors.New("other machines could reach it, and the endpoint has no authentication or TLS")

func remoteError(addr, where string) error {
	return kerr.WithHint(kerr.New(kerr.Usage, "HTTP listener: refusing to listen on %s (%s): %w", addr, where, ErrNotLoopback),
		"listen on a loopback address such as "+DefaultAddr+" and reach it through an authenticating proxy or an SSH tunnel, or allow remote access explicitly")
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
