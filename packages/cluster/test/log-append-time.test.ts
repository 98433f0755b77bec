import { describe, expect, it } from "vitest";
import { describePartitionLog } from "../src/index";
import { clientCluster } from "./clients-helpers";

/** Produces two records stamped by the producer at CreateTime 1000 and 1005 on topic `t`. */
async function produceOld(t: ReturnType<typeof clientCluster>) {
  const producer = t.kafka.producer({ idempotent: true });
  await producer.connect();
  return await t.run(
    producer.send({
      topic: "t",
      messages: [
        { value: "a", timestamp: "1000" },
        { value: "b", timestamp: "1005" },
      ],
    }),
  );
}

async function consumedTimestamps(t: ReturnType<typeof clientCluster>): Promise<string[]> {
  const consumer = t.kafka.consumer({ groupId: "reader" });
  await consumer.connect();
  await consumer.subscribe({ topic: "t", fromBeginning: true });
  const out = [];
  for (let i = 0; i < 5 && out.length < 2; i++) out.push(...(await t.run(consumer.poll())));
  return out.map((m) => m.message.timestamp);
}

describe("message.timestamp.type=LogAppendTime", () => {
  it("the leader stamps its append time into the batch: attribute bit, maxTimestamp, valid CRC", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1, 2]],
      configs: { "message.timestamp.type": "LogAppendTime" },
    });
    const appendedAt = BigInt(t.clock.now());
    const [sent] = await produceOld(t);
    const [batch] = describePartitionLog(t.cluster, "t", 0).batches;
    // The produce answer carries the append time, as Kafka's ProduceResponse log_append_time does.
    expect(sent?.logAppendTime).toBe(String(batch!.maxTimestamp));
    expect(batch).toMatchObject({ timestampType: "LogAppendTime", crcValid: true, recordCount: 2 });
    // The append time, not the producer's 1005; the base timestamp and record deltas stay as produced.
    expect(batch!.maxTimestamp).toBeGreaterThanOrEqual(appendedAt);
    expect(batch!.maxTimestamp).toBeLessThanOrEqual(BigInt(t.clock.now()));
    expect(batch!.baseTimestamp).toBe(1000n);
    // Consumers take the batch's maxTimestamp for every record of a LogAppendTime batch.
    expect(await consumedTimestamps(t)).toEqual([String(batch!.maxTimestamp), String(batch!.maxTimestamp)]);
    // Followers copy the leader's stamped bytes.
    for (const broker of t.cluster.runningBrokers()) {
      const follower = [...t.cluster.broker(broker)!.replica("t", 0)!.log.batches()][0]!;
      expect(follower.maxTimestamp).toBe(batch!.maxTimestamp);
      expect(follower.crc).toBe(batch!.crc);
    }
  });

  it("CreateTime (the default) keeps the producer's timestamps", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    const [sent] = await produceOld(t);
    expect(sent?.logAppendTime).toBe("-1");
    const [batch] = describePartitionLog(t.cluster, "t", 0).batches;
    expect(batch).toMatchObject({ timestampType: "CreateTime", maxTimestamp: 1005n, baseTimestamp: 1000n });
    expect(await consumedTimestamps(t)).toEqual(["1000", "1005"]);
  });
});
