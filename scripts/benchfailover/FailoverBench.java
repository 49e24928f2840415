// MirrorMaker 2's way of moving consumer groups to the target, timed: per group,
// RemoteClusterUtils.translateOffsets (reads the checkpoints topic on the target) and then the
// commit kafka-consumer-groups --reset-offsets makes (Admin.alterConsumerGroupOffsets, in this
// one JVM: the command line tool's own start-up per group is measured apart by the Go harness).
//
// Usage: FailoverBench <target bootstrap> <source alias> <group prefix> <groups> [budget seconds]
// Prints one JSON line: groups (done), partitions, translate_ms, commit_ms, total_ms. With a
// budget it stops after the group that exceeds it (each translateOffsets call reads the whole
// checkpoints topic, so the time per group is about constant and the caller extrapolates).
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

public class FailoverBench {
    public static void main(String[] args) throws Exception {
        String boot = args[0], alias = args[1], prefix = args[2];
        int n = Integer.parseInt(args[3]);
        long budget = args.length > 4 ? Long.parseLong(args[4]) * 1_000_000_000L : 0;
        int done = 0;
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", boot);
        long translate = 0, commit = 0, partitions = 0;
        long t0 = System.nanoTime();
        try (Admin admin = Admin.create(props)) {
            for (int i = 0; i < n; i++) {
                String g = prefix + i;
                long s = System.nanoTime();
                Map<TopicPartition, OffsetAndMetadata> m = RemoteClusterUtils.translateOffsets(props, alias, g, Duration.ofSeconds(60));
                long s2 = System.nanoTime();
                translate += s2 - s;
                admin.alterConsumerGroupOffsets(g, m).all().get();
                commit += System.nanoTime() - s2;
                partitions += m.size();
                done++;
                if (done % 25 == 0) {
                    System.err.printf("FailoverBench: %d groups in %d ms%n", done, (System.nanoTime() - t0) / 1_000_000);
                }
                if (budget > 0 && System.nanoTime() - t0 > budget) {
                    break;
                }
            }
        }
        long total = System.nanoTime() - t0;
        System.out.printf("{\"groups\":%d,\"partitions\":%d,\"translate_ms\":%d,\"commit_ms\":%d,\"total_ms\":%d}%n",
            done, partitions, translate / 1_000_000, commit / 1_000_000, total / 1_000_000);
    }
}
