package httpapi

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kmmproject/kmm/mm2conf/clientconf"
)

// The MM2 connectors, by simple class name (MM2's connector names in dedicated mode).
const (
	SourceConnector     = "MirrorSourceConnector"
	CheckpointConnector = "MirrorCheckpointConnector"
	HeartbeatConnector  = "MirrorHeartbeatConnector"
)

// Connect connector and task states.
const (
	StateRunning    = "RUNNING"
	StateFailed     = "FAILED"
	StatePaused     = "PAUSED"
	StateUnassigned = "UNASSIGNED"
)

const classPrefix = "org.apache.kafka.connect.mirror."

// connector is one MM2 connector of one flow.
type connector struct {
	name string // as answered: "S->T.<Kind>" at the top level, "<Kind>" under /{S}/{T}/
	kind string // SourceConnector, CheckpointConnector or HeartbeatConnector
	flow *FlowStats
}

// connectorsOf lists the connectors MM2 runs for f: the source and checkpoint connectors for
// an enabled flow, the heartbeat connector for every flow.
func connectorsOf(f *FlowStats, scoped bool) []connector {
	kinds := []string{HeartbeatConnector}
	if f.Enabled {
		kinds = []string{SourceConnector, CheckpointConnector, HeartbeatConnector}
	}
	out := make([]connector, len(kinds))
	for i, k := range kinds {
		name := k
		if scoped {
			name = f.Name() + "." + k
		}
		out[i] = connector{name: name, kind: k, flow: f}
	}
	return out
}

// Wire shapes, field order as Kafka Connect writes them.
type (
	connectorState struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace,omitempty"`
	}
	taskState struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace,omitempty"`
	}
	connectorStatus struct {
		Name      string         `json:"name"`
		Connector connectorState `json:"connector"`
		Tasks     []taskState    `json:"tasks"`
		Type      string         `json:"type"`
		// Worker (kmm's own field, absent without kmm.workers.enabled): the partitions this
		// process copies for the source connector, and whether it leads the flow.
		Worker *WorkerShare `json:"kmm_worker,omitempty"`
	}
	taskID struct {
		Connector string `json:"connector"`
		Task      int    `json:"task"`
	}
	connectorInfo struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
		Tasks  []taskID          `json:"tasks"`
		Type   string            `json:"type"`
	}
	offsetEntry struct {
		Partition map[string]any `json:"partition"`
		Offset    map[string]any `json:"offset"`
	}
	connectorOffsets struct {
		Offsets []offsetEntry `json:"offsets"`
	}
	connectError struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}
)

// state is the connector's Connect state and its trace: the error when FAILED; while RUNNING,
// why the flow cannot move (a cluster it needs unreachable, a stall), as Connect keeps a task
// RUNNING while its clients retry.
func (c connector) state(now time.Time) (string, string) {
	f := c.flow
	switch {
	case f.Err != "":
		return StateFailed, f.Err
	case f.Paused != "":
		return StatePaused, f.Paused
	case !f.Running:
		return StateUnassigned, ""
	case c.kind == CheckpointConnector && !f.CheckpointsRunning:
		return StateUnassigned, ""
	}
	return StateRunning, outageTrace(c, now)
}

// tasks is the connector's task count: one per replication pipeline for the source
// connector; one for checkpoints and heartbeats when they are emitted, else none (MM2's
// heartbeat connector has no task when emit.heartbeats.enabled=false).
func (c connector) tasks() int {
	f := c.flow
	switch c.kind {
	case SourceConnector:
		return f.Tasks
	case CheckpointConnector:
		if f.CheckpointsRunning {
			return 1
		}
	case HeartbeatConnector:
		if f.EmitHeartbeats {
			return 1
		}
	}
	return 0
}

func (s *Server) status(c connector) connectorStatus {
	state, trace := c.state(s.opts.Now())
	st := connectorStatus{Name: c.name, Type: "source", Tasks: []taskState{},
		Connector: connectorState{State: state, WorkerID: s.workerID, Trace: trace}}
	for i := range c.tasks() {
		st.Tasks = append(st.Tasks, taskState{ID: i, State: state, WorkerID: s.workerID, Trace: trace})
	}
	if c.kind == SourceConnector {
		st.Worker = c.flow.Workers
	}
	return st
}

// config is the connector's configuration: MM2's connector config of the flow when the
// server has it (Options.Configs), else what kmm knows for sure; with name and
// connector.class set per connector and secrets hidden.
func (s *Server) config(c connector) map[string]string {
	f := c.flow
	out := map[string]string{}
	if base, ok := s.opts.Configs[f.Name()]; ok {
		for k, v := range base {
			out[k] = clientconf.Redact(k, v)
		}
	} else {
		out["source.cluster.alias"] = f.Source
		out["target.cluster.alias"] = f.Target
		out["tasks.max"] = strconv.Itoa(f.Tasks)
		out["enabled"] = strconv.FormatBool(f.Enabled)
	}
	out["name"] = c.name
	out["connector.class"] = classPrefix + c.kind
	return out
}

func (s *Server) info(c connector) connectorInfo {
	in := connectorInfo{Name: c.name, Config: s.config(c), Type: "source", Tasks: []taskID{}}
	for i := range c.tasks() {
		in.Tasks = append(in.Tasks, taskID{Connector: c.name, Task: i})
	}
	return in
}

// scope is the set of connectors one request sees: every flow's at the top level (scoped
// names), or one flow's under /{source}/{target}/ (MM2's simple names, as in one herder's
// Connect cluster).
type scope struct {
	conns  []connector
	scoped bool
}

// scopeOf resolves the request's scope, or writes a 404 and returns false.
func (s *Server) scopeOf(w http.ResponseWriter, r *http.Request) (scope, bool) {
	flows := s.src.Stats()
	src, tgt := r.PathValue("source"), r.PathValue("target")
	if src == "" && tgt == "" {
		var sc scope
		sc.scoped = true
		for i := range flows {
			sc.conns = append(sc.conns, connectorsOf(&flows[i], true)...)
		}
		sortConns(sc.conns)
		return sc, true
	}
	for i := range flows {
		if flows[i].Source == src && flows[i].Target == tgt {
			sc := scope{conns: connectorsOf(&flows[i], false)}
			sortConns(sc.conns)
			return sc, true
		}
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("Unknown flow %s->%s", src, tgt))
	return scope{}, false
}

func sortConns(cs []connector) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
}

// lookup finds the connector named in the path, or writes a 404 and returns false. At the top
// level a bare MM2 name ("MirrorSourceConnector", as a tutorial written for one flow has it)
// resolves when exactly one flow runs that connector.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) (connector, bool) {
	sc, ok := s.scopeOf(w, r)
	if !ok {
		return connector{}, false
	}
	name := r.PathValue("name")
	var byKind []connector
	for _, c := range sc.conns {
		if c.name == name {
			return c, true
		}
		if sc.scoped && c.kind == name {
			byKind = append(byKind, c)
		}
	}
	switch {
	case len(byKind) == 1:
		return byKind[0], true
	case len(byKind) > 1:
		names := make([]string, len(byKind))
		for i, c := range byKind {
			names[i] = c.name
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("Connector %s not found: kmm runs it for %d flows, name one of %s (or use /<source>/<target>/connectors/%s)",
			name, len(byKind), strings.Join(names, ", "), name))
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("Connector %s not found", name))
	}
	return connector{}, false
}

// GET /connectors[?expand=status&expand=info]
func (s *Server) handleConnectors(w http.ResponseWriter, r *http.Request) {
	sc, ok := s.scopeOf(w, r)
	if !ok {
		return
	}
	expand, ok := r.URL.Query()["expand"]
	if !ok {
		names := make([]string, len(sc.conns))
		for i, c := range sc.conns {
			names[i] = c.name
		}
		writeJSON(w, http.StatusOK, names)
		return
	}
	// Like Connect: any expand parameter switches to the map form; unknown expansions are
	// ignored.
	out := map[string]map[string]any{}
	for _, c := range sc.conns {
		m := map[string]any{}
		for _, e := range expand {
			switch e {
			case "status":
				m["status"] = s.status(c)
			case "info":
				m["info"] = s.info(c)
			}
		}
		out[c.name] = m
	}
	writeJSON(w, http.StatusOK, out)
}

// GET /connectors/{name}
func (s *Server) handleConnector(w http.ResponseWriter, r *http.Request) {
	if c, ok := s.lookup(w, r); ok {
		writeJSON(w, http.StatusOK, s.info(c))
	}
}

// GET /connectors/{name}/config
func (s *Server) handleConnectorConfig(w http.ResponseWriter, r *http.Request) {
	if c, ok := s.lookup(w, r); ok {
		writeJSON(w, http.StatusOK, s.config(c))
	}
}

// GET /connectors/{name}/status
func (s *Server) handleConnectorStatus(w http.ResponseWriter, r *http.Request) {
	if c, ok := s.lookup(w, r); ok {
		writeJSON(w, http.StatusOK, s.status(c))
	}
}

// GET /connectors/{name}/tasks/{task}/status
func (s *Server) handleTaskStatus(w http.ResponseWriter, r *http.Request) {
	c, ok := s.lookup(w, r)
	if !ok {
		return
	}
	st := s.status(c)
	id, err := strconv.Atoi(r.PathValue("task"))
	if err != nil || id < 0 || id >= len(st.Tasks) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("No status found for task %s-%s", c.name, r.PathValue("task")))
		return
	}
	writeJSON(w, http.StatusOK, st.Tasks[id])
}

// GET /connectors/{name}/offsets (KIP-875): the source connector's resume positions as stored
// in mm2-offsets.<S>.internal, in MM2's partition and offset shape: {"cluster": source alias,
// "partition": n, "topic": source topic} -> {"offset": last replicated source offset}.
// Partitions without a stored position are left out. The checkpoint and heartbeat connectors
// report none (kmm stores no positions for them).
func (s *Server) handleConnectorOffsets(w http.ResponseWriter, r *http.Request) {
	c, ok := s.lookup(w, r)
	if !ok {
		return
	}
	out := connectorOffsets{Offsets: []offsetEntry{}}
	// ?acknowledged=true (a kmm extension, same shape): the last source offset the target has
	// acknowledged per partition, which may be ahead of the stored (flushed) one. kmm lag and
	// failover read it as the live replicated position.
	acked := r.URL.Query().Get("acknowledged") == "true"
	if c.kind == SourceConnector {
		for _, p := range c.flow.Partitions {
			off := p.Stored
			if acked {
				off = p.Acked
			}
			if off < 0 {
				continue
			}
			out.Offsets = append(out.Offsets, offsetEntry{
				Partition: map[string]any{"cluster": c.flow.Source, "partition": p.Partition, "topic": p.Topic},
				Offset:    map[string]any{"offset": off}})
		}
	}
	writeJSON(w, http.StatusOK, out)
}
