import { describe, expect, it } from "vitest";
import { clientCluster } from "./clients-helpers";

describe("an idempotent producer after DeleteRecords removed every batch it wrote", () => {
  it("continues its sequence: the partition keeps its state when the log start moves, as Kafka does", async () => {
    const { cluster, kafka, run } = clientCluster();
    const admin = kafka.admin();
    await run(
      admin.createTopics({
        topics: [
          {
            topic: "t",
            numPartitions: 1,
            replicationFactor: 3,
            configEntries: [{ name: "segment.bytes", value: "100" }],
          },
        ],
      }),
    );
    const first = kafka.producer({ idempotent: true });
    const second = kafka.producer({ idempotent: true });
    await first.connect();
    await second.connect();
    for (let i = 0; i < 5; i++) await run(first.send({ topic: "t", messages: [{ value: `a${i}` }] }));
    await run(second.send({ topic: "t", messages: [{ value: "b0" }] }));
    await run(admin.deleteTopicRecords({ topic: "t", partitions: [{ partition: 0, offset: "5" }] }));
    const sent = await run(first.send({ topic: "t", messages: [{ value: "a5" }] }));
    expect(sent[0]).toMatchObject({ errorCode: 0, baseOffset: "6", logStartOffset: "5" });
    // The deleted segments are gone: the producer's batches are all below the log start.
    for (const id of [0, 1, 2])
      expect(cluster.broker(id)!.replica("t", 0)!.log.segments()[0]!.baseOffset).toBe(5n);
  });
});
