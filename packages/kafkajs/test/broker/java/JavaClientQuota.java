// Sets (or, with "-", removes) the fetch byte-rate quota of some client ids on a Kafka cluster with Kafka's
// own Admin client (kafka-clients from the broker's jars), run as a single-file program:
//   java -cp '<libs>/*' JavaClientQuota.java <bootstrap> <bytes per second | -> <client id>...
// Prints "quota <rate> for <n> client id(s)" once the brokers accepted it.
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;

public class JavaClientQuota {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", args[0]);
    Double rate = args[1].equals("-") ? null : Double.valueOf(args[1]);
    List<ClientQuotaAlteration> alterations = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      ClientQuotaEntity entity = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, args[i]));
      alterations.add(
          new ClientQuotaAlteration(entity, List.of(new ClientQuotaAlteration.Op("consumer_byte_rate", rate))));
    }
    try (Admin admin = Admin.create(p)) {
      admin.alterClientQuotas(alterations).all().get();
    }
    System.out.println("quota " + args[1] + " for " + (args.length - 2) + " client id(s)");
  }
}
