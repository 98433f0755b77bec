import { afterEach, describe, expect, it } from "vitest";
import { ConsoleConsumer } from "../src/node/console-consumer";
import { MirrorNode, type NodeCluster } from "../src/node/mirror-node";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe("ConsoleConsumer.stop", () => {
  it("a stop landing after --max-messages ended the consume says it did not stop it (all sent were committed)", async () => {
    const node = MirrorNode.start({ name: "dr", brokers: 1, sources: [] });
    open.push(node);
    const real = node.destination;
    await real.kafka
      .admin()
      .createTopics({ topics: [{ topic: "t", numPartitions: 1, replicationFactor: 1 }] });
    const producer = real.kafka.producer();
    await producer.connect();
    await producer.send({ topic: "t", messages: ["a", "b", "c"].map((value) => ({ value })) });
    await producer.disconnect();
    // The Ctrl-C's stop (the client printed one message) reaches the node as the group commits all three.
    let opened: ConsoleConsumer | undefined;
    const target: NodeCluster = {
      ...real,
      kafka: Object.assign(Object.create(real.kafka), {
        consumer: (config: Parameters<typeof real.kafka.consumer>[0]) => {
          const consumer = real.kafka.consumer(config);
          const commitOffsets = consumer.commitOffsets.bind(consumer);
          consumer.commitOffsets = (offsets) => {
            opened?.stop(1);
            return commitOffsets(offsets);
          };
          return consumer;
        },
      }),
    };
    opened = await ConsoleConsumer.open(target, {
      topic: "t",
      group: "g",
      fromBeginning: true,
      isolation: "read_uncommitted",
      maxMessages: 3,
      timeoutMs: 60_000,
    });
    expect(await opened.run(() => undefined)).toEqual({ messages: 3, committed: 3, stopped: false });
    const offsets = await real.kafka.admin().fetchOffsets({ groupId: "g", topics: ["t"] });
    expect(offsets[0]?.partitions.map((p) => p.offset)).toEqual(["3"]);
  }, 60_000);
});
