import { describe, expect, it } from "vitest";
import { clientCluster } from "./clients-helpers";
import { expectRefused } from "./refusals";

describe("an offset commit for a partition the cluster does not have, as Kafka's OffsetCommit answers it", () => {
  it("is UNKNOWN_TOPIC_OR_PARTITION and not stored; the offsets of existing partitions are committed", async () => {
    const { kafka, run, cluster } = clientCluster();
    await run(kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 2 }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    await run(consumer.subscribe({ topic: "t" }));
    await run(consumer.poll());
    // Stored before, for a group to resume from if a topic "gone" were ever created. kafkajs sends one entry
    // per topic ("t" with partitions 0 and 7, then "gone"), so partition 7's error is the response's first.
    await expectRefused(
      run(
        consumer.commitOffsets([
          { topic: "t", partition: 0, offset: "1" },
          { topic: "gone", partition: 0, offset: "5" },
          { topic: "t", partition: 7, offset: "3" },
        ]),
      ),
      "UNKNOWN_TOPIC_OR_PARTITION",
      /^topic 't' has partitions 0 to 1; partition 7 does not exist: group 'g' keeps no offset for it \(2 offset\(s\) of partitions the cluster does not have; the other 1 offset\(s\) were committed\)\. Commit offsets of existing partitions only/,
    );
    expect([...cluster.groups.fetchOffsets("g").keys()]).toEqual(["t:0"]);
    expect(cluster.groups.fetchOffsets("g").get("t:0")?.offset).toBe(1n);
    await expectRefused(
      run(consumer.commitOffsets([{ topic: "t", partition: 2, offset: "3" }])),
      "UNKNOWN_TOPIC_OR_PARTITION",
      /^topic 't' has partitions 0 to 1; partition 2 does not exist: .*nothing was committed/,
    );
    expect([...cluster.groups.fetchOffsets("g").keys()]).toEqual(["t:0"]);
  });

  it("auto-commit drops a topic deleted under it and commits the rest; the consumer keeps consuming", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await run(
      admin.createTopics({
        topics: [
          { topic: "a", numPartitions: 1 },
          { topic: "b", numPartitions: 1 },
        ],
      }),
    );
    const producer = kafka.producer();
    await run(producer.connect());
    await run(producer.send({ topic: "a", messages: [{ value: "a1" }] }));
    await run(producer.send({ topic: "b", messages: [{ value: "b1" }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    await run(consumer.subscribe({ topics: ["a", "b"], fromBeginning: true }));
    const crashes: unknown[] = [];
    consumer.on(consumer.events.CRASH, (event) => crashes.push(event.payload.error));
    const commits: unknown[] = [];
    consumer.on(consumer.events.COMMIT_OFFSETS, (event) => commits.push(event.payload.topics));
    const seen: string[] = [];
    let sawA2: () => void = () => {};
    const a2 = new Promise<void>((resolve) => {
      sawA2 = resolve;
    });
    await run(
      consumer.run({
        eachMessage: async ({ topic, message }) => {
          seen.push(String(message.value));
          // Deleted while its record is processed: the round's auto-commit carries an offset for it.
          if (topic === "b") await admin.deleteTopics({ topics: ["b"] });
          if (String(message.value) === "a2") sawA2();
        },
      }),
    );
    await run(producer.send({ topic: "a", messages: [{ value: "a2" }] }));
    await run(a2);
    await run(consumer.stop());
    expect(seen).toEqual(["a1", "b1", "a2"]);
    // The deleted topic's offset came back after Kafka's deletion forgot it before; or every later round's
    // commit was refused again, the consumer never committing (nor learning it committed) "a" again.
    expect(crashes).toEqual([]);
    expect(commits.at(-1)).toEqual([{ topic: "a", partition: 0, offset: "2" }]);
    expect([...cluster.groups.fetchOffsets("g").keys()]).toEqual(["a:0"]);
    expect(cluster.groups.fetchOffsets("g").get("a:0")?.offset).toBe(2n);
    await run(consumer.disconnect());
  });
});
