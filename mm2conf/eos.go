package mm2conf

import (
	"fmt"
	"strconv"
	"strings"
)

// Exactly-once mode (KIP-618 as MM2 runs it in dedicated mode): kmm switches a flow to it on
// MM2's own worker key exactly.once.source.support = enabled, read as MM2 reads it (per target
// cluster: <T>.exactly.once.source.support) or, as a kmm extension, at top level (MM2 ignores
// it there). docs/mm2-compat.md, "Exactly-once".

const eosKey = "exactly.once.source.support"

// exactlyOnce sets f.Settings.ExactlyOnce from the worker config of the flow (MM2's place) or
// the top-level key.
func (c *Config) exactlyOnce(f *FlowConfig) {
	s := &f.Settings
	if v, ok := f.Worker[eosKey]; ok {
		s.ExactlyOnce = strings.EqualFold(javaTrim(v.Resolved()), "enabled")
		s.ExactlyOnceKey = v.Origin.Key
		return
	}
	if e, ok := c.raw.get(eosKey); ok {
		s.ExactlyOnce = strings.EqualFold(javaTrim(e.Value), "enabled")
		s.ExactlyOnceKey = e.Key
	}
}

// eosValue returns the value of exactly.once.source.support that decides for f, with its
// position and key as written ("" when unset).
func (c *Config) eosValue(f *FlowConfig) (string, Pos, string) {
	if v, ok := f.Worker[eosKey]; ok {
		return javaTrim(v.Resolved()), v.Origin.Pos, v.Origin.Key
	}
	if e, ok := c.raw.get(eosKey); ok {
		return javaTrim(e.Value), e.Pos, e.Key
	}
	return "", Pos{}, ""
}

// checkExactlyOnce explains, at their lines, the settings an exactly-once flow cannot run
// with (errors: kmm would not keep the promise) and what MM2 does differently.
func (c *Config) checkExactlyOnce(f *FlowConfig, sink *diagSink) {
	val, pos, key := c.eosValue(f)
	if key == "" {
		return
	}
	switch strings.ToLower(val) {
	case "enabled":
	case "disabled":
		return
	case "preparing":
		sink.warn("exactly-once", pos, key, key+" = preparing: kmm replicates this flow at least once (as MM2's tasks do while preparing); set enabled for exactly-once", "")
		return
	default:
		sink.err("invalid-value", pos, key, fmt.Sprintf("%s = %q is none of disabled, preparing, enabled (MM2's worker refuses to start)", key, val),
			"write enabled for exactly-once replication, or disabled")
		return
	}
	if key == eosKey {
		sink.warn("exactly-once-top-level", pos, key, fmt.Sprintf("%s at top level: kmm replicates every flow exactly once, but MM2 ignores this worker key at top level and would replicate at least once", key),
			fmt.Sprintf("write %s.%s = enabled (per target cluster) so that MM2 runs exactly-once too", f.Target, eosKey))
	}
	if f.Settings.WorkersEnabled {
		v := f.Connector["kmm.workers.enabled"]
		sink.err("exactly-once", v.Origin.Pos, v.Origin.Key, "kmm.workers.enabled = true with exactly-once: the pipelines of several kmm processes would share transactional ids and fence each other",
			"remove kmm.workers.enabled (one kmm process per exactly-once flow), or "+key+" = disabled")
	}
	if cc := f.ClientConfig(RoleSourceConsumer); cc != nil {
		if v, ok := cc.Java["isolation.level"]; ok && !v.Origin.IsDefault() && v.Origin.Key != "" && !strings.EqualFold(javaTrim(v.Resolved()), "read_committed") {
			sink.err("exactly-once", v.Origin.Pos, v.Origin.Key, fmt.Sprintf("%s = %s with exactly-once: records of aborted and open source transactions would be copied (MM2 refuses this too: \"MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is configured with isolation.level set to 'read_committed'\")", v.Origin.Key, javaTrim(v.Resolved())),
				"remove it (kmm reads read_committed by default) or write read_committed")
		}
	}
	cc := f.ClientConfig(RoleTargetProducer)
	if cc == nil {
		return
	}
	if v, ok := cc.Java["acks"]; ok && !v.Origin.IsDefault() && v.Origin.Key != "" {
		if a := strings.ToLower(javaTrim(v.Resolved())); a != "all" && a != "-1" {
			sink.err("exactly-once", v.Origin.Pos, v.Origin.Key, fmt.Sprintf("%s = %s with exactly-once: a transactional producer needs acks = all", v.Origin.Key, javaTrim(v.Resolved())),
				"remove it (acks = all is the default) or write all")
		}
	}
	if v, ok := cc.Java["enable.idempotence"]; ok && !v.Origin.IsDefault() && v.Origin.Key != "" && strings.EqualFold(javaTrim(v.Resolved()), "false") {
		sink.err("exactly-once", v.Origin.Pos, v.Origin.Key, v.Origin.Key+" = false with exactly-once: a transactional producer is idempotent",
			"remove it")
	}
	if v, ok := cc.Java["transactional.id"]; ok && v.Origin.Key != "" {
		sink.err("exactly-once", v.Origin.Pos, v.Origin.Key, v.Origin.Key+" with exactly-once: kmm sets each pipeline's transactional.id itself (<group.id>-MirrorSourceConnector-<task>, as MM2 does), so a restarted kmm or MM2 fences the old one",
			"remove it")
	}
	timeout := int64(60000)
	tpos, tkey := Pos{}, ""
	if v, ok := cc.Java["transaction.timeout.ms"]; ok {
		if n, err := strconv.ParseInt(javaTrim(v.Resolved()), 10, 64); err == nil {
			timeout, tpos, tkey = n, v.Origin.Pos, v.Origin.Key
		}
	}
	if iv := f.Settings.TransactionInterval.Milliseconds(); iv > 0 && iv*2 > timeout {
		if tkey == "" {
			v := f.Connector["kmm.transaction.interval.ms"]
			tpos, tkey = v.Origin.Pos, v.Origin.Key
		}
		sink.err("exactly-once", tpos, tkey, fmt.Sprintf("kmm.transaction.interval.ms = %d is more than half the target producer's transaction.timeout.ms = %d: a transaction could expire before kmm commits it", iv, timeout),
			fmt.Sprintf("lower kmm.transaction.interval.ms, or raise %s.producer.transaction.timeout.ms (at most the brokers' transaction.max.timeout.ms, 900000 by default)", f.Target))
	}
}
