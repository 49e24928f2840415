// Differential oracle for clientconf.ParseJAAS: parses each base64-encoded line of the input
// file with Kafka's own (package-private) org.apache.kafka.common.security.JaasConfig and prints
// one result line per input: "ERR" or "OK" followed by module|FLAG|key=value... (all base64).
// Run: java -cp '<kafka libs>/*' JaasCheck.java vectors.txt
import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;

public class JaasCheck {
    static String b64(String s) {
        return Base64.getEncoder().encodeToString(String.valueOf(s).getBytes(StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        Class<?> c = Class.forName("org.apache.kafka.common.security.JaasConfig");
        Constructor<?> k = c.getDeclaredConstructor(String.class, String.class);
        k.setAccessible(true);
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            String text = new String(Base64.getDecoder().decode(line), StandardCharsets.UTF_8);
            StringBuilder out = new StringBuilder();
            try {
                Configuration cfg = (Configuration) k.newInstance("KafkaClient", text);
                AppConfigurationEntry[] es = cfg.getAppConfigurationEntry("KafkaClient");
                out.append("OK");
                for (AppConfigurationEntry e : es) {
                    String flag = e.getControlFlag().toString().replace("LoginModuleControlFlag: ", "").toUpperCase();
                    out.append(' ').append(b64(e.getLoginModuleName())).append('|').append(flag);
                    Map<String, Object> sorted = new TreeMap<>();
                    for (Map.Entry<String, ?> o : e.getOptions().entrySet()) {
                        sorted.put(String.valueOf(o.getKey()), o.getValue());
                    }
                    for (Map.Entry<String, Object> o : sorted.entrySet()) {
                        out.append('|').append(b64(o.getKey())).append('=').append(b64(String.valueOf(o.getValue())));
                    }
                }
            } catch (Throwable t) {
                out.setLength(0);
                out.append("ERR");
            }
            System.out.println(out);
        }
    }
}
