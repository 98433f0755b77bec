// Kafka's own Java producer (kafka-clients 3.9.1 from the broker's jars), run as a single-file program:
//   java -cp '<libs>/*' JavaProducer.java <bootstrap> <topic>
// Writes one idempotent batch per codec (snappy, lz4, zstd, gzip, none) with headers, then one committed
// and one aborted transaction, so the mirror is checked against what Kafka's reference client writes.
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class JavaProducer {
  static Properties props(String bootstrap) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    p.put("enable.idempotence", "true");
    p.put("acks", "all");
    p.put("linger.ms", "50");
    return p;
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String topic = args[1];
    for (String codec : new String[] {"snappy", "lz4", "zstd", "gzip", "none"}) {
      Properties p = props(bootstrap);
      p.put("compression.type", codec);
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
        for (int i = 0; i < 50; i++) {
          ProducerRecord<String, String> r =
              new ProducerRecord<>(topic, 0, "k" + (i % 9), codec + " record " + i + " " + "x".repeat(i));
          r.headers().add("h", ("v" + i).getBytes(StandardCharsets.UTF_8));
          r.headers().add("h", "repeated".getBytes(StandardCharsets.UTF_8));
          producer.send(r);
        }
        producer.flush();
      }
    }
    Properties tp = props(bootstrap);
    tp.put("transactional.id", "java-tx-" + topic);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(tp)) {
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, 0, "t", "committed by java"));
      producer.commitTransaction();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>(topic, 0, "t", "aborted by java"));
      producer.flush();
      producer.abortTransaction();
    }
    System.out.println("produced");
  }
}
