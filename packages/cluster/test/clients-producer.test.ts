import { CompressionType, loadCompressionCodecs } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import {
  ClusterError,
  CompressionTypes,
  createDefaultPartitioner,
  murmur2,
  type ProduceRequest,
  toPositive,
} from "../src/index";
import { clientCluster, expectKafkaError, values } from "./clients-helpers";
import { batchesOf } from "./helpers";

describe("producer and consumer round trip", () => {
  it("delivers keys, null values, headers in order and timestamps from the cluster clock", async () => {
    const { cluster, kafka, run, clock } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1, replicationFactor: 3 }] }));
    const producer = kafka.producer();
    await producer.connect();
    const sentAt = clock.now();
    const sent = await run(
      producer.send({
        topic: "t",
        messages: [
          { key: "k1", value: "v1", headers: { a: "1", b: ["x", "y"], c: Buffer.from("z") } },
          { key: null, value: null },
          { value: Buffer.from([0, 1, 2]), timestamp: "1234" },
        ],
      }),
    );
    expect(sent).toEqual([
      {
        topicName: "t",
        partition: 0,
        errorCode: 0,
        baseOffset: "0",
        logAppendTime: "-1",
        logStartOffset: "0",
        throttleTimeMs: 0,
      },
    ]);
    const consumer = kafka.consumer({ groupId: "g" });
    await consumer.connect();
    await consumer.subscribe({ topic: "t", fromBeginning: true });
    const got = await run(consumer.poll());
    expect(got.map((m) => [m.message.offset, m.message.key?.toString() ?? null])).toEqual([
      ["0", "k1"],
      ["1", null],
      ["2", null],
    ]);
    expect(values(got)).toEqual(["v1", null, "\u0000\u0001\u0002"]);
    expect(got[0]!.message.headers).toEqual({
      a: Buffer.from("1"),
      b: [Buffer.from("x"), Buffer.from("y")],
      c: Buffer.from("z"),
    });
    expect(Object.keys(got[0]!.message.headers)).toEqual(["a", "b", "c"]);
    expect(got[0]!.message.timestamp).toBe(String(sentAt));
    expect(got[2]!.message.timestamp).toBe("1234");
    expect(cluster.broker(1)?.replica("t", 0)?.log.logEndOffset).toBe(3n);
  });

  it("sends a header without a value (null), as Kafka's RecordHeader allows and a consumer reads it", async () => {
    const { kafka, run } = clientCluster();
    await run(kafka.admin().createTopics({ topics: [{ topic: "in" }, { topic: "out" }] }));
    const producer = kafka.producer();
    await producer.connect();
    await run(
      producer.send({ topic: "in", messages: [{ value: "v", headers: { flag: null, both: ["a", null] } }] }),
    );
    const read = async (topic: string) => {
      const consumer = kafka.consumer({ groupId: `read-${topic}` });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const got = await run(consumer.poll());
      await consumer.disconnect();
      return got;
    };
    const consumed = await read("in");
    expect(consumed.map((m) => m.message.headers)).toEqual([{ flag: null, both: [Buffer.from("a"), null] }]);
    // Copied on as consumed (what a MirrorMaker-like copier does): the null header values go through.
    await run(
      producer.send({
        topic: "out",
        messages: consumed.map(({ message: m }) => ({ key: m.key, value: m.value, headers: m.headers })),
      }),
    );
    expect((await read("out")).map((m) => m.message.headers)).toEqual([
      { flag: null, both: [Buffer.from("a"), null] },
    ]);
  });

  it("compresses with gzip (and zstd once loaded) and reads it back", async () => {
    await loadCompressionCodecs();
    const { cluster, kafka, run } = clientCluster();
    cluster.controller.createTopic({ name: "z", replicaAssignment: [[0, 1]] });
    const producer = kafka.producer();
    await producer.connect();
    const messages = Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: "x".repeat(100) + i }));
    await run(producer.send({ topic: "z", messages, compression: CompressionTypes.GZIP }));
    await run(
      producer.send({ topic: "z", messages: messages.slice(0, 3), compression: CompressionTypes.ZSTD }),
    );
    const stored = batchesOf(cluster, 0, "z");
    expect(stored.map((b) => b.compression)).toEqual([CompressionType.GZIP, CompressionType.ZSTD]);
    expect(stored[0]!.sizeInBytes).toBeLessThan(50 * 100);
    const consumer = kafka.consumer({ groupId: "g", readUncommitted: true });
    await consumer.connect();
    await consumer.subscribe({ topics: ["z"], fromBeginning: true });
    const got = await run(consumer.poll());
    expect(values(got)).toEqual([
      ...messages.map((m) => m.value),
      ...messages.slice(0, 3).map((m) => m.value),
    ]);
  });

  it("partitions like Java's default partitioner: murmur2 of the key, else round-robin", async () => {
    // Kafka's UtilsTest.testMurmur2 vectors.
    const vectors: [string | number[], number][] = [
      ["21", -973932308],
      ["foobar", -790332482],
      ["a-little-bit-long-string", -985981536],
      ["a-little-bit-longer-string", -1486304829],
      ["lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971],
      [[97, 98, 99], 479470107],
    ];
    for (const [input, expected] of vectors) {
      expect(murmur2(typeof input === "string" ? Buffer.from(input) : Buffer.from(input))).toBe(expected);
    }
    const partitioner = createDefaultPartitioner();
    const meta = [0, 1, 2, 3].map((p) => ({ partitionId: p, leader: p === 2 ? -1 : 0 }));
    expect(partitioner({ topic: "t", partitionMetadata: meta, message: { key: "21" } })).toBe(
      toPositive(-973932308) % 4,
    );
    expect(partitioner({ topic: "t", partitionMetadata: meta, message: { key: "k", partition: 3 } })).toBe(3);
    const rr = [0, 1, 2, 3].map(() => partitioner({ topic: "t", partitionMetadata: meta, message: {} }));
    expect(rr).toEqual([0, 1, 3, 0]);

    const { cluster, kafka, run } = clientCluster();
    cluster.controller.createTopic({ name: "p", numPartitions: 4, replicationFactor: 1 });
    const producer = kafka.producer();
    await producer.connect();
    const res = await run(
      producer.send({
        topic: "p",
        messages: [
          { key: "foobar", value: "a" },
          { key: "foobar", value: "b" },
        ],
      }),
    );
    expect(res.map((r) => r.partition)).toEqual([toPositive(-790332482) % 4]);
  });
});

describe("idempotent producer", () => {
  it("retries a batch whose acknowledgement was lost, and the log holds it once", async () => {
    const { cluster, kafka, run } = clientCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    const leader = cluster.leaderFor("t", 0);
    const produce = leader.produce.bind(leader);
    let calls = 0;
    leader.produce = async (request: ProduceRequest) => {
      calls++;
      const response = await produce(request);
      if (calls === 1)
        throw new ClusterError("REQUEST_TIMED_OUT", "the acknowledgement was lost on the way back");
      return response;
    };
    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    const res = await run(producer.send({ topic: "t", messages: [{ value: "once" }, { value: "twice?" }] }));
    expect(calls).toBe(2);
    expect(res[0]!.baseOffset).toBe("0");
    for (const id of [0, 1, 2]) {
      const batches = batchesOf(cluster, id, "t");
      expect(batches.map((b) => [b.baseOffset, b.recordCount])).toEqual([[0n, 2]]);
    }
    // The next batch continues the sequence.
    await run(producer.send({ topic: "t", messages: [{ value: "next" }] }));
    expect(batchesOf(cluster, 0, "t").map((b) => b.baseSequence)).toEqual([0, 2]);
  });

  it("survives a leader crash after the append: the new leader recognises the retried batch", async () => {
    const { cluster, kafka, run, scheduler } = clientCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    const producer = kafka.producer({ idempotent: true, retry: { initialRetryTime: 50 } });
    await producer.connect();
    const sending = producer.send({ topic: "t", messages: [{ value: "a" }] });
    // Let the append and the followers' fetches happen, but crash the leader before it answers.
    const leader = cluster.leaderFor("t", 0);
    const produce = leader.produce.bind(leader);
    leader.produce = async (request: ProduceRequest) => {
      const p = produce(request);
      scheduler.schedule(() => cluster.crashBroker(0), 0);
      return p;
    };
    const res = await run(sending);
    expect(cluster.leaderFor("t", 0).brokerId).not.toBe(0);
    expect(res[0]!.baseOffset).toBe("0");
    const newLeader = cluster.leaderFor("t", 0).brokerId;
    expect(batchesOf(cluster, newLeader, "t").map((b) => b.recordCount)).toEqual([1]);
  });

  it("refuses acks other than all", async () => {
    const { cluster, kafka } = clientCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    await expectKafkaError(
      producer.send({ topic: "t", acks: 1, messages: [{ value: "x" }] }),
      "INVALID_REQUIRED_ACKS",
    );
  });
});

describe("ACLs and quotas on produce and fetch", () => {
  it("denies produce without WRITE and fetch without READ, with the topic authorization error", async () => {
    const { cluster, run, as } = clientCluster({ authorizer: { enabled: true, superUsers: ["User:admin"] } });
    const admin = as({ principal: "User:admin" }).admin();
    await run(admin.createTopics({ topics: [{ topic: "t", replicationFactor: 1 }] }));
    const alice = as({ principal: "User:alice" });
    const producer = alice.producer();
    await producer.connect();
    await expectKafkaError(
      run(producer.send({ topic: "t", messages: [{ value: "x" }] })),
      "TOPIC_AUTHORIZATION_FAILED",
    );
    await admin.createAcls({
      acl: [
        {
          resourceType: 2,
          resourceName: "t",
          resourcePatternType: 3,
          principal: "User:alice",
          host: "*",
          operation: 4,
          permissionType: 3,
        },
        {
          resourceType: 3,
          resourceName: "g",
          resourcePatternType: 3,
          principal: "User:alice",
          host: "*",
          operation: 3,
          permissionType: 3,
        },
      ],
    });
    await run(producer.send({ topic: "t", messages: [{ value: "x" }] }));
    const consumer = alice.consumer({ groupId: "g" });
    await consumer.connect();
    await consumer.subscribe({ topic: "t", fromBeginning: true });
    // WRITE implies DESCRIBE (list offsets works) but not READ.
    await expectKafkaError(run(consumer.poll()), "TOPIC_AUTHORIZATION_FAILED");
    const other = as({ principal: "User:bob" }).consumer({ groupId: "g" });
    await other.connect();
    await other.subscribe({ topic: "t" });
    await expectKafkaError(run(other.poll()), "GROUP_AUTHORIZATION_FAILED");
    expect(cluster.leaderFor("t", 0).replica("t", 0)?.log.logEndOffset).toBe(1n);
  });

  it("reports the quota throttle and delays the next produce and fetch by it", async () => {
    const { cluster, kafka, run, clock, settle } = clientCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
    cluster.quotas.setQuota("produce", "test", 1000);
    cluster.quotas.setQuota("fetch", "test", 1000);
    const producer = kafka.producer();
    await producer.connect();
    const big = [{ value: "x".repeat(20_000) }];
    const first = await run(producer.send({ topic: "t", messages: big }));
    expect(first[0]!.throttleTimeMs).toBeGreaterThan(0);
    const until = producer.throttledUntilMs;
    expect(until).toBe(clock.now() + first[0]!.throttleTimeMs);
    const log = cluster.leaderFor("t", 0).replica("t", 0)!.log;
    const second = producer.send({ topic: "t", messages: [{ value: "y" }] });
    settle(first[0]!.throttleTimeMs - 1);
    await new Promise((r) => setImmediate(r));
    expect(log.logEndOffset).toBe(1n); // still waiting out the throttle
    await run(second);
    expect(clock.now()).toBeGreaterThanOrEqual(until);
    expect(log.logEndOffset).toBe(2n);

    const consumer = kafka.consumer({ groupId: "g" });
    await consumer.connect();
    await consumer.subscribe({ topic: "t", fromBeginning: true });
    await run(consumer.poll());
    expect(consumer.lastThrottleTimeMs).toBeGreaterThan(0);
    const before = clock.now();
    await run(consumer.poll());
    expect(clock.now() - before).toBeGreaterThanOrEqual(consumer.lastThrottleTimeMs > 0 ? 1 : 0);
  });
});
