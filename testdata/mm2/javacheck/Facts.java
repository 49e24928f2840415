// Facts prints the ConfigDefs that mm2conf's key tables (mm2conf/keys_gen.go)
// are derived from, as "name<TAB>TYPE<TAB>default" lines under "== section"
// headers. Run against the Kafka jars:
//
//	javac -d /tmp/facts -cp "$KAFKA/libs/*" Facts.java
//	java -cp "$KAFKA/libs/*:/tmp/facts" Facts > facts.txt
import java.lang.reflect.*;
import java.util.*;
import org.apache.kafka.common.config.*;
import org.apache.kafka.connect.runtime.distributed.DistributedConfig;

public class Facts {
    static void dump(String name, ConfigDef d) {
        System.out.println("== " + name);
        for (ConfigDef.ConfigKey k : new TreeMap<>(d.configKeys()).values()) {
            Object dv = k.hasDefault() ? k.defaultValue : "<required>";
            if (dv instanceof List) dv = String.join(", ", ((List<?>) dv).stream().map(Object::toString).toArray(String[]::new));
            if (dv instanceof Class) dv = ((Class<?>) dv).getName();
            System.out.println(k.name + "\t" + k.type + "\t" + dv);
        }
    }

    static void names(String name, Set<String> s) {
        System.out.println("== " + name);
        for (String n : new TreeSet<>(s)) System.out.println(n + "\t-\t-");
    }

    public static void main(String[] a) throws Exception {
        Class<?> mcc = Class.forName("org.apache.kafka.connect.mirror.MirrorClientConfig");
        Field f = mcc.getDeclaredField("CLIENT_CONFIG_DEF");
        f.setAccessible(true);
        dump("client", (ConfigDef) f.get(null));
        for (String c : new String[] {"MirrorSourceConfig", "MirrorCheckpointConfig", "MirrorHeartbeatConfig"}) {
            Field g = Class.forName("org.apache.kafka.connect.mirror." + c).getDeclaredField("CONNECTOR_CONFIG_DEF");
            g.setAccessible(true);
            dump(c, (ConfigDef) g.get(null));
        }
        Method m = Class.forName("org.apache.kafka.connect.mirror.MirrorMakerConfig").getDeclaredMethod("config");
        m.setAccessible(true);
        dump("MirrorMakerConfig", (ConfigDef) m.invoke(null));
        Map<String, String> p = new HashMap<>();
        p.put("group.id", "g");
        p.put("offset.storage.topic", "o");
        p.put("status.storage.topic", "s");
        p.put("config.storage.topic", "c");
        p.put("key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
        p.put("value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
        DistributedConfig dc = new DistributedConfig(p);
        Field def = AbstractConfig.class.getDeclaredField("definition");
        def.setAccessible(true);
        dump("worker", (ConfigDef) def.get(dc));
        names("producer", org.apache.kafka.clients.producer.ProducerConfig.configNames());
        names("consumer", org.apache.kafka.clients.consumer.ConsumerConfig.configNames());
        names("admin", org.apache.kafka.clients.admin.AdminClientConfig.configNames());
    }
}
