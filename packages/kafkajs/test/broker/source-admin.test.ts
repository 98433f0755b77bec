import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KafkajsSourceCluster, READ_COMMITTED, READ_UNCOMMITTED } from "../../src/index";
import { createServedTopics, javaGroupProtocol, kafkaClient, startJava, until } from "./helpers";

describe("KafkajsSourceCluster's admin answers against the real broker", () => {
  const kafka = kafkaClient("source-admin-test");
  const admin = kafka.admin();
  const source = new KafkajsSourceCluster("admin", { "bootstrap.servers": inject("kafkaBootstrap") });

  beforeAll(async () => {
    await admin.connect();
  });

  afterAll(async () => {
    await source.close();
    await admin.disconnect();
  });

  it("describes topics with Kafka's topic ids, leader epochs and dynamic configs, internal topics left out", async () => {
    await createServedTopics(admin, [
      {
        topic: "described",
        numPartitions: 3,
        configEntries: [{ name: "cleanup.policy", value: "compact" }],
      },
    ]);
    const [kafkajsView] = (await admin.fetchTopicMetadata({ topics: ["described"] })).topics;
    const topics = await source.describeTopics();
    const described = topics.find((t) => t.name === "described")!;
    expect(described.partitions.map((p) => [p.partition, p.leaderId])).toEqual(
      kafkajsView!.partitions.map((p) => [p.partitionId, p.leader]).sort((a, b) => a[0]! - b[0]!),
    );
    expect(described.topicId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(described.configs).toEqual({ "cleanup.policy": "compact" });
    expect(topics.some((t) => t.name.startsWith("__"))).toBe(false);
    expect(await source.clusterId()).toBe(inject("kafkaClusterId"));
    // The fetchers' leader lookup asks for the named topics alone, never creates the unknown one, and
    // agrees with the full description.
    const leaders = await source.partitionLeaders(["described", "never-created"]);
    expect(leaders.map((p) => [p.topic, p.partition, p.leaderId, p.leaderEpoch])).toEqual(
      described.partitions.map((p) => ["described", p.partition, p.leaderId, p.leaderEpoch]),
    );
    expect((await admin.listTopics()).includes("never-created")).toBe(false);
    // Configs only of the topics asked for: the others come without (no DescribeConfigs for them), as
    // unknown, never as an empty set the config sync would take for "every config deleted".
    const configsOf = async (wanted: string) =>
      (await source.describeTopics({ configsOf: (name) => name === wanted })).find(
        (t) => t.name === "described",
      )!.configs;
    expect(await configsOf("described")).toEqual({ "cleanup.policy": "compact" });
    expect(await configsOf("another")).toBeUndefined();
  });

  it("lists offsets by isolation level: an open transaction holds the LSO below the high watermark", async () => {
    const topic = "isolation";
    await createServedTopics(admin, [{ topic, numPartitions: 1 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic, messages: [{ value: "stable" }] });
    const txProducer = kafka.producer({
      transactionalId: "isolation-tx",
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await txProducer.connect();
    const open = await txProducer.transaction();
    await open.send({ topic, messages: [{ value: "open 1" }, { value: "open 2" }] });
    try {
      expect(await source.listOffsets(topic, 0, -2n)).toBe(0n);
      expect(await source.listOffsetsIsolated(topic, 0, -1n, READ_UNCOMMITTED)).toBe(3n);
      expect(await source.listOffsetsIsolated(topic, 0, -1n, READ_COMMITTED)).toBe(1n);
      // kafkajs's own admin answers the LSO as "high" (it asks READ_COMMITTED).
      expect((await admin.fetchTopicOffsets(topic))[0]!.high).toBe("1");
      // OffsetsForLeaderEpoch: epoch 0 is the only one, so it ends at the log end.
      expect(await source.endOffsetForEpoch(topic, 0, 0)).toEqual({ leaderEpoch: 0, endOffset: 3n });
    } finally {
      await open.abort();
      await txProducer.disconnect();
      await producer.disconnect();
    }
  });

  it("an unknown topic is UNKNOWN_TOPIC_OR_PARTITION, a partition-level error in a fetch", async () => {
    await expect(source.listOffsets("no-such-topic", 0, -1n)).rejects.toMatchObject({
      errorName: "UNKNOWN_TOPIC_OR_PARTITION",
      code: 3,
    });
    const response = await source.fetch({
      clientId: "admin-fetch",
      brokerId: 1,
      maxBytes: 1 << 20,
      partitions: [
        {
          topic: "no-such-topic",
          partition: 0,
          fetchOffset: 0n,
          lastFetchedEpoch: -1,
          currentLeaderEpoch: -1,
          maxBytes: 1024,
        },
      ],
    });
    expect(response.partitions[0]!.error).toMatchObject({ errorName: "UNKNOWN_TOPIC_OR_PARTITION" });
  });

  it("reports consumer group offsets, and whether the group has members", async () => {
    const topic = "grouped";
    await createServedTopics(admin, [{ topic, numPartitions: 2 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic, messages: [0, 1, 0].map((partition) => ({ partition, value: "x" })) });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: "readers", sessionTimeout: 10_000, heartbeatInterval: 500 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    await consumer.run({
      autoCommitInterval: 100,
      eachMessage: async () => {
        seen++;
      },
    });
    try {
      await until(async () => {
        const group = (await source.listGroupOffsets()).find((g) => g.groupId === "readers");
        const committed = group?.offsets.map((o) => `${o.partition}:${o.offset}`).sort();
        return group?.active && committed?.join() === "0:2,1:1"
          ? undefined
          : `seen ${seen}, group ${JSON.stringify(committed)}`;
      });
    } finally {
      await consumer.disconnect();
    }
    await until(async () => {
      const group = (await source.listGroupOffsets()).find((g) => g.groupId === "readers");
      return group && !group.active ? undefined : "the group still has members";
    });
  });

  it("sees a group of Kafka's Java consumer as active while it is a member, KIP-848's consumer protocol on Kafka 4", async () => {
    const topic = "java-grouped";
    await createServedTopics(admin, [{ topic, numPartitions: 2 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic, messages: [0, 1, 0].map((partition) => ({ partition, value: "x" })) });
    await producer.disconnect();
    // Kafka 4's consumer protocol (the classic DescribeGroups calls such a group Dead); classic on 3.x.
    const { child, exited, output } = startJava("JavaGroupConsumer.java", [
      inject("kafkaBootstrap"),
      topic,
      "java-readers",
      javaGroupProtocol(),
      "3",
      "8000",
    ]);
    try {
      await until(async () =>
        output().includes("committed 3") ? undefined : `the consumer printed '${output()}'`,
      );
      const group = (await source.listGroupOffsets()).find((g) => g.groupId === "java-readers");
      expect(group?.offsets.map((o) => `${o.partition}:${o.offset}`).sort()).toEqual(["0:2", "1:1"]);
      expect(group?.active).toBe(true);
      await exited;
      expect(output()).toContain("left");
      await until(async () => {
        const left = (await source.listGroupOffsets()).find((g) => g.groupId === "java-readers");
        return left && !left.active ? undefined : "the group still has members";
      });
    } finally {
      child.kill();
      await exited;
    }
  });
});
