// Kafka's own Java transactional producer (kafka-clients from the broker's jars), run as a single-file
// program:
//   java -cp '<libs>/*' JavaTransactions.java <bootstrap> <topic> <transactional id>
// Commits one transaction, aborts one, then begins a third, sends to it, flushes, prints "open" and keeps it
// open until stdin closes (or 120 s pass). On Kafka 4 with transaction.version 2 (KIP-890) every
// transaction ends with a bumped producer epoch; on 3.x the epoch stays.
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class JavaTransactions {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", args[0]);
    p.put("transactional.id", args[2]);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    p.put("transaction.timeout.ms", "120000");
    String topic = args[1];
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      producer.initTransactions();
      String[] outcomes = {"committed", "aborted", "open"};
      for (String outcome : outcomes) {
        producer.beginTransaction();
        for (int i = 0; i < 3; i++) producer.send(new ProducerRecord<>(topic, 0, "k" + i, outcome + " " + i));
        producer.flush();
        if (outcome.equals("committed")) producer.commitTransaction();
        else if (outcome.equals("aborted")) producer.abortTransaction();
      }
      System.out.println("open");
      System.out.flush();
      long until = System.currentTimeMillis() + 120_000;
      while (System.currentTimeMillis() < until && System.in.read() != -1) {}
    }
  }
}
