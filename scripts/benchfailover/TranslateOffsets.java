// MirrorMaker 2's own translation, for bench-failover's "translation error vs lag" rows:
// RemoteClusterUtils.translateOffsets per group over the checkpoints on the target cluster
// (MM2's, or kmm's: they are the same format).
//
// Usage: TranslateOffsets <target bootstrap> <source alias> <group>...
// Prints one JSON line per group: {"group":"g","offsets":{"topic:partition":offset,...}}.
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

public class TranslateOffsets {
    public static void main(String[] args) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", args[0]);
        for (int i = 2; i < args.length; i++) {
            Map<TopicPartition, OffsetAndMetadata> m = RemoteClusterUtils.translateOffsets(props, args[1], args[i], Duration.ofSeconds(60));
            StringBuilder b = new StringBuilder("{\"group\":\"").append(args[i]).append("\",\"offsets\":{");
            boolean first = true;
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : m.entrySet()) {
                if (!first) b.append(',');
                first = false;
                b.append('"').append(e.getKey().topic()).append(':').append(e.getKey().partition()).append("\":").append(e.getValue().offset());
            }
            System.out.println(b.append("}}"));
        }
    }
}
