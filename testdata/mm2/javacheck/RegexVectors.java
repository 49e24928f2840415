// RegexVectors reads JSON lines {"p":pattern,"in":[names...]} on stdin and
// prints {"p":..,"in":..,"error":msg} or {"p":..,"in":..,"m":[bools]} where
// m[i] is Pattern.compile(p).matcher(in[i]).matches(), as MM2's filters do.
import java.io.*;
import java.util.*;
import java.util.regex.*;
import com.fasterxml.jackson.databind.*;

public class RegexVectors {
    public static void main(String[] args) throws Exception {
        ObjectMapper om = new ObjectMapper();
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = r.readLine()) != null) {
            if (line.isEmpty()) continue;
            Map<String, Object> v = om.readValue(line, Map.class);
            String p = (String) v.get("p");
            List<String> in = (List<String>) v.get("in");
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("p", p);
            out.put("in", in);
            try {
                Pattern pat = Pattern.compile(p);
                List<Boolean> m = new ArrayList<>();
                for (String s : in) m.add(pat.matcher(s).matches());
                out.put("m", m);
            } catch (PatternSyntaxException e) {
                out.put("error", e.getDescription());
            }
            System.out.println(om.writeValueAsString(out));
        }
    }
}
