// Kafka's own Java consumer (kafka-clients from the broker's jars) in a consumer group, run as a single-file
// program:
//   java -cp '<libs>/*' JavaGroupConsumer.java <bootstrap> <topic> <group> <classic|consumer> <records> <stayMs>
// Subscribes with the given group protocol (`consumer` is KIP-848's, Kafka 4), reads `records` records,
// commits them (commitSync), prints "committed <n>", stays a member for `stayMs` ms, then leaves the group.
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

public class JavaGroupConsumer {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", args[0]);
    p.put("group.id", args[2]);
    p.put("group.protocol", args[3]);
    p.put("key.deserializer", StringDeserializer.class.getName());
    p.put("value.deserializer", StringDeserializer.class.getName());
    p.put("auto.offset.reset", "earliest");
    p.put("enable.auto.commit", "false");
    int wanted = Integer.parseInt(args[4]);
    long stayMs = Long.parseLong(args[5]);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      consumer.subscribe(List.of(args[1]));
      int read = 0;
      long deadline = System.currentTimeMillis() + 120_000;
      while (read < wanted && System.currentTimeMillis() < deadline) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
        read += records.count();
      }
      consumer.commitSync();
      System.out.println("committed " + read);
      System.out.flush();
      long until = System.currentTimeMillis() + stayMs;
      while (System.currentTimeMillis() < until) consumer.poll(Duration.ofMillis(200));
    }
    System.out.println("left");
  }
}
