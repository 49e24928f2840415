// PropsVectors reads hex-encoded inputs (one per line) on stdin and prints,
// one JSON line each, what java.util.Properties.load(InputStream) makes of
// them: {"in":hex,"props":{...}} or {"in":hex,"error":msg}.
// Used by mm2conf's lexer tests (see testdata/mm2/javacheck/README.md).
import java.io.*;
import java.util.*;
import com.fasterxml.jackson.databind.ObjectMapper;

public class PropsVectors {
    public static void main(String[] args) throws Exception {
        ObjectMapper om = new ObjectMapper();
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = r.readLine()) != null) {
            if (line.isEmpty()) continue;
            byte[] b = new byte[line.length() / 2];
            for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(line.substring(2 * i, 2 * i + 2), 16);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("in", line);
            try {
                Properties p = new Properties();
                p.load(new ByteArrayInputStream(b));
                out.put("props", new TreeMap<>(p));
            } catch (Exception e) {
                out.put("error", e.getMessage());
            }
            System.out.println(om.writeValueAsString(out));
        }
    }
}
