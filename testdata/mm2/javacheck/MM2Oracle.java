// MM2Oracle asks MirrorMaker 2's own classes (Kafka 4.1.1) how they read an MM2 properties file,
// without dialing any broker. It reads JSON lines on stdin:
//
//   {"name":..., "file":..., "clusters":[...], "topics":[...], "groups":[...]}
//
// (clusters: MM2's --clusters, empty for all; topics/groups: names to ask about) and writes one
// JSON line per input to the file named by its only argument:
//
//   {"name":..., "fatal":..., "pairs":[...], "flows":{"S->T":{...}}}
//
// For each herder: the raw connectorBaseConfig and the resolved workerConfig; the worker config
// and the worker's admin client checked as the herder builds them (DistributedConfig, bootstrap
// addresses, the client's channel: key stores, JAAS); each connector's validate() on the config
// as the worker resolves it; the typed connector settings; the Java client configs of the roles
// kmm models; the aliases and internal topic names the connectors use; and, for every name asked
// about, what MirrorSourceConnector.shouldReplicateTopic / the checkpoint connector's group
// filter decide, with the condition that decided. "legacy" holds the same typed settings and
// name verdicts with MM2 2.7-3.9's reading of the *.blacklist keys (an alias of *.exclude when
// that key is absent), the one reading in which kmm deliberately differs from 4.x.
//
// It lives in MM2's package to reach the package-private methods the connectors themselves call.
// Used by mm2conf's TestMM2Oracle (testdata/mm2/javacheck/README.md).
package org.apache.kafka.connect.mirror;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.network.ChannelBuilder;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.runtime.WorkerProducerOracle;
import org.apache.kafka.connect.runtime.distributed.DistributedConfig;
import org.apache.kafka.connect.runtime.isolation.Plugins;

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

public class MM2Oracle {
    static final ObjectMapper OM = new ObjectMapper();
    static final List<Class<? extends Connector>> CONNECTORS = Arrays.asList(
        MirrorSourceConnector.class, MirrorCheckpointConnector.class, MirrorHeartbeatConnector.class);
    static final String[][] LEGACY = {
        {"topics.blacklist", "topics.exclude"},
        {"groups.blacklist", "groups.exclude"},
        {"config.properties.blacklist", "config.properties.exclude"},
    };
    // One Plugins for the worker producer config (the real worker has its own; it only serves
    // the connector-config override policy here).
    static Plugins plugins;

    public static void main(String[] args) throws Exception {
        plugins = new Plugins(Collections.singletonMap("plugin.discovery", "service_load"));
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (PrintWriter w = new PrintWriter(new OutputStreamWriter(new FileOutputStream(args[0]), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isEmpty()) continue;
                @SuppressWarnings("unchecked")
                Map<String, Object> in = OM.readValue(line, Map.class);
                w.println(OM.writeValueAsString(one(in)));
                w.flush();
            }
        }
    }

    static String msg(Throwable e) {
        String m = e.getMessage();
        Throwable c = e.getCause();
        // Kafka wraps the useful message (e.g. a missing key store) in its causes.
        while (c != null && c != e) {
            if (c.getMessage() != null && (m == null || !m.contains(c.getMessage()))) m = (m == null ? "" : m + ": ") + c.getMessage();
            e = c;
            c = c.getCause();
        }
        return e.getClass().getSimpleName() + ": " + m;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> one(Map<String, Object> in) {
        Map<String, Object> out = new TreeMap<>();
        out.put("name", in.get("name"));
        long t0 = System.nanoTime();
        try {
            Map<String, String> props = Utils.propsToStringMap(Utils.loadProps((String) in.get("file")));
            // MirrorMakerConfig builds a Plugins from its own properties, which by default scans
            // the whole class path by reflection (seconds per file). Service loading finds the same
            // Kafka classes (config providers, policies); the key reaches no connector or worker map.
            props.putIfAbsent("plugin.discovery", "service_load");
            MirrorMakerConfig cfg = new MirrorMakerConfig(props);
            List<String> clusters = (List<String>) in.get("clusters");
            Set<String> targets = clusters != null && !clusters.isEmpty() ? new HashSet<>(clusters) : cfg.clusters();
            List<String> pairs = new ArrayList<>();
            Map<String, Object> flows = new TreeMap<>();
            for (SourceAndTarget st : cfg.clusterPairs()) {
                if (!targets.contains(st.target())) continue;
                pairs.add(st.toString());
                flows.put(st.toString(), flow(cfg, props, st, in));
            }
            Collections.sort(pairs);
            out.put("pairs", pairs);
            out.put("flows", flows);
            if (pairs.isEmpty()) out.put("fatal", "No source->target replication flows.");
        } catch (Throwable e) {
            out.put("fatal", msg(e));
        }
        out.put("ms", (System.nanoTime() - t0) / 1000000);
        return out;
    }

    static Map<String, Object> flow(MirrorMakerConfig cfg, Map<String, String> raw, SourceAndTarget st, Map<String, Object> in) {
        Map<String, Object> f = new TreeMap<>();
        Map<String, String> base = cfg.connectorBaseConfig(st, MirrorSourceConnector.class);
        f.put("connector", new TreeMap<>(base));
        Map<String, String> worker = null;
        List<String> problems = new ArrayList<>();
        try {
            worker = cfg.workerConfig(st);
            f.put("worker", new TreeMap<>(worker));
        } catch (Throwable e) {
            problems.add("worker config: " + msg(e));
        }
        DistributedConfig dc = null;
        if (worker != null) {
            try {
                dc = new DistributedConfig(worker);
            } catch (Throwable e) {
                problems.add("worker config: " + msg(e));
            }
            // The herder's shared admin client (KafkaBasedLog) is built from the worker config.
            String p = checkClient("admin", new HashMap<>(worker));
            if (p != null) problems.add("worker admin client: " + p);
        }
        f.put("worker_problems", problems);

        // The worker resolves connector configs with the config providers before validating.
        Map<String, Map<String, String>> conn = new LinkedHashMap<>();
        Map<String, Object> rejected = new TreeMap<>();
        for (Class<? extends Connector> cls : CONNECTORS) {
            try {
                Map<String, String> props = cfg.transform(cfg.connectorBaseConfig(st, cls));
                conn.put(cls.getSimpleName(), props);
                Config v = cls.getDeclaredConstructor().newInstance().validate(props);
                Map<String, List<String>> errs = new TreeMap<>();
                for (ConfigValue cv : v.configValues()) {
                    if (!cv.errorMessages().isEmpty()) errs.put(cv.name(), cv.errorMessages());
                }
                if (!errs.isEmpty()) rejected.put(cls.getSimpleName(), errs);
            } catch (Throwable e) {
                rejected.put(cls.getSimpleName(), Collections.singletonMap("", Collections.singletonList(msg(e))));
            }
        }
        f.put("rejected", rejected);

        Map<String, String> src = conn.get("MirrorSourceConnector");
        if (src == null) return f;
        try {
            f.putAll(typed(src, conn.get("MirrorCheckpointConnector"), conn.get("MirrorHeartbeatConnector"), rejected, in));
        } catch (Throwable e) {
            f.put("settings_error", msg(e));
            return f;
        }
        Map<String, String> legacySrc = legacy(raw, src, st);
        if (legacySrc != null) {
            try {
                Map<String, Object> l = typed(legacySrc, legacy(raw, conn.get("MirrorCheckpointConnector"), st),
                    legacy(raw, conn.get("MirrorHeartbeatConnector"), st), rejected, in);
                l.remove("clients");
                f.put("legacy", l);
            } catch (Throwable e) {
                f.put("legacy", Collections.singletonMap("settings_error", msg(e)));
            }
        }

        // Client configs (MirrorSourceConfig / the worker's producer) and the checks the clients
        // make when MM2 creates them for this herder.
        MirrorSourceConfig sc = new MirrorSourceConfig(src);
        Map<String, Map<String, Object>> clients = new TreeMap<>();
        clients.put("source-consumer", sc.sourceConsumerConfig("replication-consumer"));
        clients.put("source-admin", sc.sourceAdminConfig("replication-source-admin"));
        clients.put("target-admin", sc.targetAdminConfig("replication-target-admin"));
        clients.put("target-consumer", sc.targetConsumerConfig("offset-syncs-target-consumer"));
        clients.put("source-producer", sc.sourceProducerConfig("offset-syncs-source-producer"));
        clients.put("offset-syncs-producer", sc.offsetSyncsTopicProducerConfig());
        if (dc != null) {
            try {
                clients.put("target-producer", WorkerProducerOracle.producerConfig(dc, plugins, src));
            } catch (Throwable e) {
                problems.add("worker producer: " + msg(e));
            }
        }
        Map<String, Object> clientProblems = new TreeMap<>();
        List<String> used = new ArrayList<>(Arrays.asList("target-producer", "target-admin"));
        if (sc.enabled()) {
            used.addAll(Arrays.asList("source-consumer", "source-admin", "offset-syncs-producer"));
            if (!"source".equals(sc.offsetSyncsTopicLocation())) used.add("target-consumer");
        }
        for (String role : used) {
            Map<String, Object> c = clients.get(role);
            if (c == null) continue;
            String kind = role.endsWith("consumer") ? "consumer" : role.endsWith("producer") ? "producer" : "admin";
            String p = checkClient(kind, c);
            if (p != null) clientProblems.put(role, p);
        }
        f.put("client_problems", clientProblems);
        Map<String, Object> shown = new TreeMap<>();
        for (Map.Entry<String, Map<String, Object>> e : clients.entrySet()) {
            Map<String, Object> m = new TreeMap<>();
            for (Map.Entry<String, Object> kv : e.getValue().entrySet()) {
                String k = kv.getKey();
                if (k.equals("client.id") || k.startsWith("metrics.context.") || k.endsWith(".serializer") || k.endsWith(".deserializer")) continue;
                m.put(k, String.valueOf(kv.getValue() instanceof Password ? ((Password) kv.getValue()).value() : kv.getValue()));
            }
            shown.put(e.getKey(), m);
        }
        f.put("clients", shown);
        return f;
    }

    // legacy: MM2 2.7-3.9 read topics.blacklist (and the two others) as an alias of the .exclude
    // key when that key is absent, at top level or per flow. Returns null when nothing changes.
    static Map<String, String> legacy(Map<String, String> raw, Map<String, String> conn, SourceAndTarget st) {
        if (conn == null) return null;
        Map<String, String> out = new HashMap<>(conn);
        boolean changed = false;
        for (String[] l : LEGACY) {
            if (out.containsKey(l[1])) continue;
            String v = conn.get(l[0]);
            if (v == null) v = raw.get(l[0]);
            if (v != null) {
                out.put(l[1], v);
                changed = true;
            }
        }
        return changed ? out : null;
    }

    static Object canon(Object v) {
        if (v == null) return null;
        if (v instanceof List) {
            List<String> l = new ArrayList<>();
            for (Object o : (List<?>) v) l.add(String.valueOf(o));
            return l;
        }
        if (v instanceof Class) return ((Class<?>) v).getName();
        if (v instanceof Password) return "[hidden]";
        return String.valueOf(v);
    }

    // typed: the connectors' typed settings, aliases, internal topic names and name verdicts.
    static Map<String, Object> typed(Map<String, String> src, Map<String, String> ckpt, Map<String, String> hb,
                                     Map<String, Object> rejected, Map<String, Object> in) {
        Map<String, Object> f = new TreeMap<>();
        MirrorSourceConfig sc = new MirrorSourceConfig(src);
        MirrorCheckpointConfig cc = new MirrorCheckpointConfig(ckpt);
        MirrorHeartbeatConfig hc = new MirrorHeartbeatConfig(hb);
        Map<String, Object> settings = new TreeMap<>();
        for (AbstractConfig c : Arrays.asList(hc, cc, sc)) {
            for (Map.Entry<String, ?> e : c.values().entrySet()) {
                String k = e.getKey();
                if (k.equals("security.protocol") || k.startsWith("ssl.") || k.startsWith("sasl.")) continue;
                settings.put(k, canon(e.getValue()));
            }
        }
        f.put("settings", settings);

        ReplicationPolicy pol = sc.replicationPolicy();
        Map<String, Object> names = new TreeMap<>();
        names.put("source_alias", sc.sourceClusterAlias());
        names.put("target_alias", sc.targetClusterAlias());
        names.put("offset_syncs_topic", sc.offsetSyncsTopic());
        names.put("checkpoints_topic", cc.checkpointsTopic());
        names.put("heartbeats_topic", hc.heartbeatsTopic());
        try {
            names.put("source_partition", OM.writeValueAsString(MirrorUtils.wrapPartition(new TopicPartition("t", 0), sc.sourceClusterAlias())));
        } catch (Exception e) {
            names.put("source_partition", msg(e));
        }
        f.put("names", names);

        boolean enabled = sc.enabled();
        boolean sourceOK = !rejected.containsKey("MirrorSourceConnector");
        TopicFilter tf = sc.topicFilter();
        Map<String, Object> incOnly = new HashMap<>(sc.originals());
        incOnly.put("topics.exclude", "");
        DefaultTopicFilter inc = new DefaultTopicFilter();
        inc.configure(incOnly);
        MirrorSourceConnector c = new MirrorSourceConnector(new SourceAndTarget(sc.sourceClusterAlias(), sc.targetClusterAlias()),
            pol, tf, sc.configPropertyFilter(), sc.heartbeatsReplicationEnabled());
        List<Object> topics = new ArrayList<>();
        @SuppressWarnings("unchecked")
        List<String> askTopics = (List<String>) in.getOrDefault("topics", Collections.emptyList());
        for (String t : askTopics) {
            Map<String, Object> v = new TreeMap<>();
            v.put("name", t);
            boolean byFilter = tf.shouldReplicateTopic(t);
            boolean heartbeats = sc.heartbeatsReplicationEnabled() && pol.isHeartbeatsTopic(t);
            String reason;
            if (!enabled) reason = "flow-disabled";
            else if (!sourceOK) reason = "rejected";
            else if (!byFilter && !heartbeats) reason = inc.shouldReplicateTopic(t) ? "excluded" : "not-included";
            else if (pol.isInternalTopic(t)) reason = "internal";
            else if (c.isCycle(t)) reason = "cycle";
            else reason = byFilter ? "included" : "heartbeats";
            boolean replicated = enabled && sourceOK && c.shouldReplicateTopic(t);
            if (replicated != (reason.equals("included") || reason.equals("heartbeats"))) reason = "oracle-inconsistent";
            v.put("replicated", replicated);
            v.put("reason", reason);
            v.put("target", pol.formatRemoteTopic(sc.sourceClusterAlias(), t));
            topics.add(v);
        }
        f.put("topics", topics);

        GroupFilter gf = cc.groupFilter();
        Map<String, Object> gIncOnly = new HashMap<>(cc.originals());
        gIncOnly.put("groups.exclude", "");
        DefaultGroupFilter ginc = new DefaultGroupFilter();
        ginc.configure(gIncOnly);
        @SuppressWarnings("unchecked")
        Map<String, List<String>> ckErrs = (Map<String, List<String>>) rejected.getOrDefault("MirrorCheckpointConnector", Collections.emptyMap());
        boolean ckEnabled = cc.getBoolean("emit.checkpoints.enabled");
        boolean syncsEnabled = sc.emitOffsetSyncsEnabled();
        boolean otherCkErr = false;
        for (String k : ckErrs.keySet()) {
            if (!k.equals("emit.checkpoints.enabled") && !k.equals("emit.offset-syncs.enabled")) otherCkErr = true;
        }
        List<Object> groups = new ArrayList<>();
        @SuppressWarnings("unchecked")
        List<String> askGroups = (List<String>) in.getOrDefault("groups", Collections.emptyList());
        for (String g : askGroups) {
            Map<String, Object> v = new TreeMap<>();
            v.put("name", g);
            String reason;
            if (!enabled) reason = "flow-disabled";
            else if (!ckEnabled) reason = "checkpoints-disabled";
            else if (!syncsEnabled) reason = "offset-syncs-disabled";
            else if (otherCkErr) reason = "rejected";
            else if (!gf.shouldReplicateGroup(g)) reason = ginc.shouldReplicateGroup(g) ? "excluded" : "not-included";
            else reason = "included";
            boolean checkpointed = reason.equals("included");
            v.put("checkpointed", checkpointed);
            v.put("synced", checkpointed && cc.getBoolean("sync.group.offsets.enabled"));
            v.put("reason", reason);
            groups.add(v);
        }
        f.put("groups", groups);
        return f;
    }

    // checkClient builds the client's config as Kafka's client constructors do and runs the
    // checks they make before any connection: bootstrap.servers syntax (ClientUtils without the
    // DNS lookup) and the channel (TLS key stores, the JAAS login). SASL mechanisms whose login
    // talks to a server (GSSAPI, OAUTHBEARER with a token endpoint) are not logged in.
    static String checkClient(String kind, Map<String, Object> props) {
        Map<String, Object> p = new HashMap<>(props);
        AbstractConfig cfg;
        try {
            switch (kind) {
                case "consumer":
                    p.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
                    p.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
                    cfg = new ConsumerConfig(p);
                    break;
                case "producer":
                    p.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
                    p.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
                    cfg = new ProducerConfig(p);
                    break;
                default:
                    cfg = new AdminClientConfig(p);
            }
        } catch (Throwable e) {
            return msg(e);
        }
        for (String url : cfg.getList("bootstrap.servers")) {
            if (url == null || url.isEmpty()) continue;
            String host = Utils.getHost(url);
            Integer port = Utils.getPort(url);
            if (host == null || port == null) return "Invalid url in bootstrap.servers: " + url;
            if (port < 0 || port > 65535) return "Invalid port in bootstrap.servers: " + url;
        }
        String mech = String.valueOf(cfg.originals().getOrDefault("sasl.mechanism", "GSSAPI")).trim();
        String proto = cfg.getString("security.protocol");
        if (proto.startsWith("SASL") && (mech.equals("GSSAPI")
                || mech.equals("OAUTHBEARER") && cfg.originals().get("sasl.oauthbearer.token.endpoint.url") != null)) {
            return null;
        }
        try {
            ChannelBuilder cb = ClientUtils.createChannelBuilder(cfg, Time.SYSTEM, new LogContext());
            cb.close();
        } catch (Throwable e) {
            return msg(e);
        }
        return null;
    }
}
