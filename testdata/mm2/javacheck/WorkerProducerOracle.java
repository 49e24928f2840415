// WorkerProducerOracle returns the producer config a Connect worker gives a source connector's
// tasks (Worker.baseProducerConfigs, package-private, hence this class in Connect's package):
// the producer that writes MM2's replicated records, checkpoints and heartbeats. Used by
// MM2Oracle.java.
package org.apache.kafka.connect.runtime;

import org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy;
import org.apache.kafka.connect.mirror.MirrorSourceConnector;
import org.apache.kafka.connect.runtime.isolation.Plugins;

import java.util.Map;

public class WorkerProducerOracle {
    public static Map<String, Object> producerConfig(WorkerConfig worker, Plugins plugins, Map<String, String> connector) {
        ConnectorConfig cc = new SourceConnectorConfig(plugins, connector, true);
        // MirrorMaker configures its herders with the All override policy.
        return Worker.baseProducerConfigs(connector.get("name"), "connector-producer-oracle", worker, cc,
            MirrorSourceConnector.class, new AllConnectorClientConfigOverridePolicy(), "oracle-cluster");
    }
}
