// MM2Dump asks the real MirrorMakerConfig what it builds. It reads JSON lines
// {"name":..., "file":..., "clusters":[...]} on stdin (file: a properties file,
// clusters: the --clusters list or empty) and prints one JSON line per input:
// {"name":..., "error":...} or {"name":..., "pairs":[...], "flows":{"S->T":{
// "connector":{...}, "worker":{...}}}} where connector is
// connectorBaseConfig(S->T, MirrorSourceConnector) and worker is
// workerConfig(S->T) (config providers resolved, as MM2 does).
// Used by mm2conf's TestJavaCrossCheck (testdata/mm2/javacheck/README.md).
import java.io.*;
import java.util.*;
import com.fasterxml.jackson.databind.*;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.connect.mirror.*;

public class MM2Dump {
    public static void main(String[] args) throws Exception {
        ObjectMapper om = new ObjectMapper();
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = r.readLine()) != null) {
            if (line.isEmpty()) continue;
            Map<String, Object> in = om.readValue(line, Map.class);
            Map<String, Object> out = new TreeMap<>();
            out.put("name", in.get("name"));
            try {
                Map<String, String> props = Utils.propsToStringMap(Utils.loadProps((String) in.get("file")));
                List<String> clusters = (List<String>) in.get("clusters");
                MirrorMakerConfig cfg = new MirrorMakerConfig(props);
                Set<String> targets = clusters != null && !clusters.isEmpty() ? new HashSet<>(clusters) : cfg.clusters();
                List<String> pairs = new ArrayList<>();
                Map<String, Object> flows = new TreeMap<>();
                for (SourceAndTarget st : cfg.clusterPairs()) {
                    if (!targets.contains(st.target())) continue;
                    pairs.add(st.toString());
                    Map<String, Object> f = new TreeMap<>();
                    f.put("connector", new TreeMap<>(cfg.connectorBaseConfig(st, MirrorSourceConnector.class)));
                    try {
                        f.put("worker", new TreeMap<>(cfg.workerConfig(st)));
                    } catch (Exception e) {
                        f.put("worker_error", e.getMessage());
                    }
                    flows.put(st.toString(), f);
                }
                Collections.sort(pairs);
                out.put("pairs", pairs);
                out.put("flows", flows);
                if (pairs.isEmpty()) out.put("error", "No source->target replication flows.");
            } catch (Throwable e) {
                out.put("error", e.getMessage());
            }
            System.out.println(om.writeValueAsString(out));
        }
    }
}
