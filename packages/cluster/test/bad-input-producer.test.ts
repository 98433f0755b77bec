import { describe, expect, it } from "vitest";
import { clientCluster, eosOffsets } from "./clients-helpers";
import { expectRefused } from "./refusals";

/** A cluster with topic "t" (one partition), its admin and a connected producer. */
async function producerOnTopicT() {
  const { kafka, run } = clientCluster();
  const admin = kafka.admin();
  await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
  const producer = kafka.producer();
  await run(producer.connect());
  return { kafka, run, admin, producer };
}

describe("producer.send and sendBatch refuse a record of the wrong shape, as kafkajs does", () => {
  it("a message without a value is refused (kafkajs: Invalid message without value), not written as a tombstone", async () => {
    const { run, admin, producer } = await producerOnTopicT();
    // Written as a null value before: a delete of key "k" in a compacted topic.
    await expectRefused(
      run(producer.send({ topic: "t", messages: [{ value: "ok" }, { key: "k" }] } as never)),
      "INVALID_RECORD",
      /message 1 for topic 't' has no value \(Invalid message without value\): give the value to write, such as \{ key: "k", value: "v" \}, or value: null for a tombstone/,
    );
    await expectRefused(
      run(producer.send({ topic: "t", messages: undefined } as never)),
      "INVALID_RECORD",
      /Invalid messages array undefined for topic "t": messages must be an array/,
    );
    expect((await run(admin.fetchTopicOffsets("t"))).map((o) => o.high)).toEqual(["0"]);
    // A tombstone said as one, and an empty send, still go through (kafkajs answers [] for no messages).
    await run(producer.send({ topic: "t", messages: [{ key: "k", value: null }] }));
    expect(await run(producer.send({ topic: "t", messages: [] }))).toEqual([]);
    expect((await run(admin.fetchTopicOffsets("t"))).map((o) => o.high)).toEqual(["1"]);
  });

  it("send() without a record, or sendBatch with topicMessages not an array, says what to pass", async () => {
    const { kafka, run, producer } = await producerOnTopicT();
    // "Cannot read properties of undefined (reading 'topic')" before.
    await expectRefused(
      run(producer.send(undefined as never)),
      "INVALID_REQUEST",
      /^producer.send\(record\): the record must be an object such as \{ topic: "orders", messages: \[\{ value: "\.\.\." \}\] \}, got undefined/,
    );
    // "topics is not iterable" before.
    await expectRefused(
      run(producer.sendBatch({ topicMessages: { topic: "t", messages: [{ value: "v" }] } } as never)),
      "INVALID_REQUEST",
      /^producer.sendBatch\(batch\): Invalid topicMessages \{"topic":"t",.*: pass \{ topicMessages: \[\{ topic: "orders"/,
    );
    await expectRefused(
      run(producer.sendBatch({ topicMessages: [null] } as never)),
      "INVALID_REQUEST",
      /topicMessages\[0\] must be an object such as \{ topic: "orders", messages:/,
    );
    // As kafkajs: no topicMessages sends nothing.
    expect(await run(producer.sendBatch({} as never))).toEqual([]);
    const transactional = kafka.producer({ transactionalId: "tx" });
    await run(transactional.connect());
    const txn = await run(transactional.transaction());
    await expectRefused(
      run(txn.send(undefined as never)),
      "INVALID_REQUEST",
      /^transaction.send\(record\): the record must be an object/,
    );
    await expectRefused(
      run(txn.sendBatch({ topicMessages: "t" } as never)),
      "INVALID_REQUEST",
      /^transaction.sendBatch\(batch\): Invalid topicMessages "t" \(a string\)/,
    );
    await run(txn.send({ topic: "t", messages: [{ value: "v" }] }));
    await run(txn.commit());
  });

  it("a send's acks or timeout of the wrong type is refused before anything is written", async () => {
    const { run, admin, producer } = await producerOnTopicT();
    // Written before, its acks=all wait scheduled with "30s" as its delay.
    await expectRefused(
      run(producer.send({ topic: "t", timeout: "30s", messages: [{ value: "v" }] } as never)),
      "INVALID_REQUEST",
      /^producer.send\(record\): timeout \(how long an acks=all send waits for the in-sync replicas\) must be a whole number of milliseconds, 0 or more, such as 30000; got "30s" \(a string\)/,
    );
    // Said "got 1" before, as if 1 were refused.
    await expectRefused(
      run(
        producer.sendBatch({
          acks: "1",
          topicMessages: [{ topic: "t", messages: [{ value: "v" }] }],
        } as never),
      ),
      "INVALID_REQUIRED_ACKS",
      /acks must be the number -1 \(all in-sync replicas, the default\), 1 \(the leader\) or 0 \(none\), got "1" \(a string\)/,
    );
    expect((await run(admin.fetchTopicOffsets("t"))).map((o) => o.high)).toEqual(["0"]);
    await run(producer.send({ topic: "t", acks: -1, timeout: 1000, messages: [{ value: "v" }] }));
    expect((await run(admin.fetchTopicOffsets("t"))).map((o) => o.high)).toEqual(["1"]);
  });

  it("transaction.sendOffsets checks every offset before adding any: a refused call commits nothing with the transaction", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "in", replicaAssignment: [[0], [1]] });
    const producer = t.kafka.producer({ transactionalId: "eos-tx" });
    await t.run(producer.connect());
    const txn = await t.run(producer.transaction());
    // Partition 0's offset was added before partition 1's failed (a bare SyntaxError), and committed below.
    await expectRefused(
      txn.sendOffsets(
        eosOffsets({
          in: [
            [0, "5"],
            [1, "abc"],
          ],
        }),
      ),
      "INVALID_REQUEST",
      /^transaction.sendOffsets\(args\): Invalid offset, expected a long received "abc" \(a string\)/,
    );
    // Committed for a group named "undefined" before (kafkajs: "Missing consumerGroupId").
    await expectRefused(
      txn.sendOffsets({ topics: [{ topic: "in", partitions: [{ partition: 0, offset: "6" }] }] } as never),
      "INVALID_REQUEST",
      /^transaction.sendOffsets\(args\): Missing consumerGroupId, got undefined: name the group/,
    );
    await expectRefused(
      txn.sendOffsets({ consumerGroupId: "eos" } as never),
      "INVALID_REQUEST",
      /Missing offset topics, got undefined: pass topics: \[\{ topic: "orders", partitions: \[\{ partition: 0, offset: "42" \}\] \}\]/,
    );
    await t.run(
      txn.sendOffsets({
        consumerGroupId: "eos",
        topics: [{ topic: "in", partitions: [{ partition: 1, offset: 3 as never }] }],
      }),
    );
    await t.run(txn.commit());
    expect([...t.cluster.groups.fetchOffsets("eos")].map(([k, o]) => [k, o.offset])).toEqual([["in:1", 3n]]);
    expect(t.cluster.groups.fetchOffsets("undefined").size).toBe(0);
  });
});
