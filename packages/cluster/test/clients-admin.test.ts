import { describe, expect, it } from "vitest";
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  ConfigResourceTypes,
  ResourcePatternTypes,
} from "../src/index";
import { clientCluster, expectKafkaError } from "./clients-helpers";

const allow = (resourceType: number, resourceName: string, principal: string, operation: number) => ({
  resourceType,
  resourceName,
  resourcePatternType: ResourcePatternTypes.LITERAL,
  principal,
  host: "*",
  operation,
  permissionType: AclPermissionTypes.ALLOW,
});

describe("admin: topics", () => {
  it("refuses CreatePartitions on a read-only mirror topic (its partitions are the source's), allows it once failed over", async () => {
    const { kafka, run, cluster, settle } = clientCluster();
    const admin = kafka.admin();
    await admin.connect();
    cluster.controller.createTopic({
      name: "m",
      replicaAssignment: [[0, 1, 2]],
      configs: { "mirror.name": "dr" },
    });
    settle();
    let refused: unknown;
    try {
      await run(admin.createPartitions({ topicPartitions: [{ topic: "m", count: 2 }] }));
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({
      errorName: "READ_ONLY_TOPIC",
      message: expect.stringContaining(
        "m is a mirror topic (mirror 'dr') and read-only: raise its partitions on the source, and the mirror's metadata sync adds them here",
      ),
    });
    expect(cluster.controller.image.topic("m")!.partitions).toHaveLength(1);
    // The engine's own raise goes through the controller.
    cluster.controller.createPartitions("m", 2);
    expect(cluster.controller.image.topic("m")!.partitions).toHaveLength(2);
    // Failed over (STOPPED clears the flag of every partition): the topic is the application's to grow.
    for (const p of [0, 1]) cluster.broker(cluster.leaderFor("m", p).brokerId)!.setReadOnly("m", p, false);
    await run(admin.createPartitions({ topicPartitions: [{ topic: "m", count: 3 }] }));
    expect(cluster.controller.image.topic("m")!.partitions).toHaveLength(3);
  });

  it("keeps working after disconnect(), as kafkajs's admin reconnects on its next call; a closed cluster refuses it", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await admin.connect();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 2 }] }));
    await admin.disconnect();
    // kafkajs's disconnect empties its broker pool; the next call's refreshMetadata finds no connected broker
    // and connects the seed broker again (cluster/brokerPool.js findConnectedBroker), so calls go on.
    expect(await run(admin.listTopics())).toEqual(["t"]);
    expect(await run(admin.createTopics({ topics: [{ topic: "u" }] }))).toBe(true);
    expect((await run(admin.fetchTopicMetadata({ topics: ["t"] }))).topics[0]!.partitions).toHaveLength(2);
    await admin.disconnect();
    await admin.connect();
    expect(await run(admin.listTopics())).toEqual(["t", "u"]);
    cluster.close();
    await expectKafkaError(admin.listTopics(), "CLUSTER_CLOSED");
  });

  it("takes -1 as the default partition count and replication factor, and refuses any other value below 1", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await admin.connect();
    expect(
      await run(admin.createTopics({ topics: [{ topic: "d", numPartitions: -1, replicationFactor: -1 }] })),
    ).toBe(true);
    expect(cluster.controller.image.topic("d")!.partitions).toHaveLength(1);
    // As Kafka's CreateTopics (INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR). Before, every negative
    // value was taken for the default: -7 partitions created a topic of 1.
    await expectKafkaError(
      admin.createTopics({ topics: [{ topic: "p", numPartitions: -7 }] }),
      "INVALID_PARTITIONS",
    );
    await expectKafkaError(
      admin.createTopics({ topics: [{ topic: "r", replicationFactor: -2 }] }),
      "INVALID_REPLICATION_FACTOR",
    );
    expect(await admin.listTopics()).toEqual(["d"]);
  });

  it("creates topics (false when they already exist), with configs and replica assignment", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await admin.connect();
    expect(
      await run(
        admin.createTopics({
          topics: [
            {
              topic: "a",
              numPartitions: 3,
              replicationFactor: 2,
              configEntries: [{ name: "cleanup.policy", value: "compact" }],
            },
            {
              topic: "b",
              replicaAssignment: [
                { partition: 1, replicas: [2, 0] },
                { partition: 0, replicas: [1, 2] },
              ],
            },
          ],
        }),
      ),
    ).toBe(true);
    expect(await run(admin.createTopics({ topics: [{ topic: "a" }, { topic: "c" }] }))).toBe(false);
    expect(await admin.listTopics()).toEqual(["a", "b", "c"]);
    await expectKafkaError(
      admin.createTopics({ topics: [{ topic: "bad name!" }] }),
      "INVALID_TOPIC_EXCEPTION",
    );
    const meta = await admin.fetchTopicMetadata({ topics: ["b"] });
    expect(meta.topics[0]).toMatchObject({
      name: "b",
      topicId: cluster.controller.image.topic("b")!.topicId,
      partitions: [
        { partitionId: 0, leader: 1, replicas: [1, 2], isr: [1, 2], leaderEpoch: 0, partitionErrorCode: 0 },
        { partitionId: 1, leader: 2, replicas: [2, 0], isr: [2, 0], leaderEpoch: 0 },
      ],
    });
    await admin.createPartitions({ topicPartitions: [{ topic: "a", count: 5 }] });
    expect((await admin.fetchTopicMetadata({ topics: ["a"] })).topics[0]!.partitions).toHaveLength(5);
    await admin.deleteTopics({ topics: ["c"] });
    await expectKafkaError(admin.deleteTopics({ topics: ["c"] }), "UNKNOWN_TOPIC_OR_PARTITION");
    expect(await admin.listTopics()).toEqual(["a", "b"]);
    const d = await admin.describeCluster();
    expect(d).toEqual({
      brokers: [0, 1, 2].map((nodeId) => ({ nodeId, host: `broker-${nodeId}.embedded`, port: 9092 })),
      controller: 0,
      clusterId: cluster.clusterId,
    });
  });

  it("incrementalAlterConfigs with validateOnly checks the values as a change would, and changes nothing", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t" }] }));
    const alter = (name: string, value: string) =>
      admin.incrementalAlterConfigs({
        validateOnly: true,
        resources: [
          { type: ConfigResourceTypes.TOPIC, name: "t", configEntries: [{ name, value, operation: "SET" }] },
        ],
      });
    // Before: validateOnly skipped the controller, so a value it refuses passed the check.
    await expect(alter("mirror.replication.throttled.replicas", "0-1,garbage")).rejects.toMatchObject({
      errorName: "INVALID_CONFIG",
    });
    await alter("retention.ms", "1000");
    expect(cluster.controller.image.topic("t")?.configs.get("retention.ms")).toBeUndefined();
  });

  it("describes and alters configs: legacy alterConfigs replaces, incrementalAlterConfigs edits", async () => {
    const { kafka, run } = clientCluster();
    const admin = kafka.admin();
    await run(
      admin.createTopics({
        topics: [{ topic: "t", configEntries: [{ name: "retention.ms", value: "1000" }] }],
      }),
    );
    const describe = async () =>
      (
        await admin.describeConfigs({
          resources: [
            {
              type: ConfigResourceTypes.TOPIC,
              name: "t",
              configNames: ["retention.ms", "cleanup.policy", "segment.ms"],
            },
          ],
        })
      ).resources[0]!.configEntries.map((e) => [e.configName, e.configValue, e.isDefault, e.configSource]);
    expect(await describe()).toEqual([
      ["cleanup.policy", "delete", true, 5],
      ["retention.ms", "1000", false, 1],
      ["segment.ms", "604800000", true, 5],
    ]);
    await admin.incrementalAlterConfigs({
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: "t",
          configEntries: [
            { name: "cleanup.policy", value: "compact", operation: "APPEND" },
            { name: "segment.ms", value: "5000", operation: "SET" },
          ],
        },
      ],
    });
    expect(await describe()).toEqual([
      ["cleanup.policy", "delete,compact", false, 1],
      ["retention.ms", "1000", false, 1],
      ["segment.ms", "5000", false, 1],
    ]);
    // The legacy call: anything not listed goes back to its default.
    await admin.alterConfigs({
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: "t",
          configEntries: [{ name: "segment.ms", value: "7000" }],
        },
      ],
    });
    expect(await describe()).toEqual([
      ["cleanup.policy", "delete", true, 5],
      ["retention.ms", "604800000", true, 5],
      ["segment.ms", "7000", false, 1],
    ]);
    await expectKafkaError(
      admin.alterConfigs({
        resources: [
          { type: ConfigResourceTypes.TOPIC, name: "t", configEntries: [{ name: "no.such", value: "1" }] },
        ],
      }),
      "INVALID_CONFIG",
    );
    await expectKafkaError(
      admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: "nope" }] }),
      "UNKNOWN_TOPIC_OR_PARTITION",
    );
  });

  it("reports high = the high watermark and low = the log start; deleteTopicRecords moves the low", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", replicationFactor: 3 }] }));
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < 5; i++) await run(producer.send({ topic: "t", messages: [{ value: `v${i}` }] }));
    expect(await run(admin.fetchTopicOffsets("t"))).toEqual([
      { partition: 0, offset: "5", high: "5", low: "0" },
    ]);
    await run(admin.deleteTopicRecords({ topic: "t", partitions: [{ partition: 0, offset: "3" }] }));
    expect(await run(admin.fetchTopicOffsets("t"))).toEqual([
      { partition: 0, offset: "5", high: "5", low: "3" },
    ]);
    for (const id of [0, 1, 2]) expect(cluster.broker(id)!.replica("t", 0)!.log.logStartOffset).toBe(3n);
    await expectKafkaError(
      run(admin.deleteTopicRecords({ topic: "t", partitions: [{ partition: 0, offset: "9" }] })),
      "OFFSET_OUT_OF_RANGE",
    );
    // A consumer starting from the beginning starts at the new log start.
    const consumer = kafka.consumer({ groupId: "g" });
    await consumer.connect();
    await consumer.subscribe({ topic: "t", fromBeginning: true });
    expect((await run(consumer.poll())).map((m) => m.message.offset)).toEqual(["3", "4"]);
  });
});

describe("admin: ACLs", () => {
  it("creates, describes and deletes ACLs in kafkajs's shape; ACL changes need ALTER on the cluster", async () => {
    const { run, as } = clientCluster({ authorizer: { enabled: true, superUsers: ["User:admin"] } });
    const admin = as({ principal: "User:admin" }).admin();
    await admin.createAcls({
      acl: [
        allow(AclResourceTypes.TOPIC, "orders", "User:alice", AclOperationTypes.READ),
        allow(AclResourceTypes.TOPIC, "orders", "User:bob", AclOperationTypes.WRITE),
        allow(AclResourceTypes.GROUP, "g", "User:alice", AclOperationTypes.READ),
      ],
    });
    const described = await admin.describeAcls({
      resourceType: AclResourceTypes.TOPIC,
      resourcePatternType: ResourcePatternTypes.ANY,
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    });
    expect(described.resources).toEqual([
      {
        resourceType: AclResourceTypes.TOPIC,
        resourceName: "orders",
        resourcePatternType: ResourcePatternTypes.LITERAL,
        acls: [
          {
            principal: "User:alice",
            host: "*",
            operation: AclOperationTypes.READ,
            permissionType: AclPermissionTypes.ALLOW,
          },
          {
            principal: "User:bob",
            host: "*",
            operation: AclOperationTypes.WRITE,
            permissionType: AclPermissionTypes.ALLOW,
          },
        ],
      },
    ]);
    const alice = as({ principal: "User:alice" }).admin();
    await expectKafkaError(
      alice.createAcls({ acl: [allow(AclResourceTypes.TOPIC, "x", "User:alice", AclOperationTypes.ALL)] }),
      "CLUSTER_AUTHORIZATION_FAILED",
    );
    await expectKafkaError(
      alice.describeAcls({ resourceType: 1, resourcePatternType: 1, operation: 1, permissionType: 1 }),
      "CLUSTER_AUTHORIZATION_FAILED",
    );
    const removed = await admin.deleteAcls({
      filters: [
        {
          resourceType: AclResourceTypes.ANY,
          resourcePatternType: 1,
          principal: "User:bob",
          operation: 1,
          permissionType: 1,
        },
      ],
    });
    expect(removed.filterResponses[0]!.matchingAcls.map((a) => [a.principal, a.operation])).toEqual([
      ["User:bob", AclOperationTypes.WRITE],
    ]);
    expect(await run(admin.listTopics())).toEqual([]);
  });

  it("describes and deletes with the MATCH pattern type as Kafka does: every binding that applies to the resource", async () => {
    const { as } = clientCluster({ authorizer: { enabled: true, superUsers: ["User:admin"] } });
    const admin = as({ principal: "User:admin" }).admin();
    const prefixed = {
      ...allow(AclResourceTypes.TOPIC, "orders-", "User:bob", AclOperationTypes.WRITE),
      resourcePatternType: ResourcePatternTypes.PREFIXED,
    };
    await admin.createAcls({
      acl: [
        allow(AclResourceTypes.TOPIC, "orders-eu", "User:alice", AclOperationTypes.READ),
        allow(AclResourceTypes.TOPIC, "*", "User:carol", AclOperationTypes.READ),
        prefixed,
        allow(AclResourceTypes.TOPIC, "payments", "User:alice", AclOperationTypes.READ),
      ],
    });
    const filter = {
      resourceType: AclResourceTypes.TOPIC,
      resourceName: "orders-eu",
      resourcePatternType: ResourcePatternTypes.MATCH,
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    };
    const described = await admin.describeAcls(filter);
    expect(described.resources.map((r) => [r.resourceName, r.resourcePatternType])).toEqual([
      ["orders-eu", ResourcePatternTypes.LITERAL],
      ["*", ResourcePatternTypes.LITERAL],
      ["orders-", ResourcePatternTypes.PREFIXED],
    ]);
    const removed = await admin.deleteAcls({ filters: [filter] });
    expect(removed.filterResponses[0]!.matchingAcls.map((a) => a.principal)).toEqual([
      "User:alice",
      "User:carol",
      "User:bob",
    ]);
    const left = await admin.describeAcls({ ...filter, resourceName: null, resourcePatternType: 1 });
    expect(left.resources.map((r) => r.resourceName)).toEqual(["payments"]);
  });

  it("checks every admin call: CREATE, DELETE, ALTER, DESCRIBE(_CONFIGS), ALTER_CONFIGS, group ops", async () => {
    const { run, as } = clientCluster({ authorizer: { enabled: true, superUsers: ["User:admin"] } });
    const root = as({ principal: "User:admin" }).admin();
    await run(root.createTopics({ topics: [{ topic: "t" }, { topic: "hidden" }] }));
    const carol = as({ principal: "User:carol" }).admin();
    await expectKafkaError(
      run(carol.createTopics({ topics: [{ topic: "new" }] })),
      "TOPIC_AUTHORIZATION_FAILED",
    );
    await root.createAcls({
      acl: [allow(AclResourceTypes.CLUSTER, "kafka-cluster", "User:carol", AclOperationTypes.CREATE)],
    });
    expect(await run(carol.createTopics({ topics: [{ topic: "new" }] }))).toBe(true);
    await expectKafkaError(carol.deleteTopics({ topics: ["t"] }), "TOPIC_AUTHORIZATION_FAILED");
    await expectKafkaError(
      carol.createPartitions({ topicPartitions: [{ topic: "t", count: 2 }] }),
      "TOPIC_AUTHORIZATION_FAILED",
    );
    await expectKafkaError(carol.fetchTopicMetadata({ topics: ["t"] }), "TOPIC_AUTHORIZATION_FAILED");
    await expectKafkaError(carol.fetchTopicOffsets("t"), "TOPIC_AUTHORIZATION_FAILED");
    await expectKafkaError(
      carol.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: "t" }] }),
      "TOPIC_AUTHORIZATION_FAILED",
    );
    await expectKafkaError(
      carol.alterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: "t", configEntries: [] }] }),
      "TOPIC_AUTHORIZATION_FAILED",
    );
    await expectKafkaError(
      carol.describeConfigs({ resources: [{ type: ConfigResourceTypes.BROKER, name: "0" }] }),
      "CLUSTER_AUTHORIZATION_FAILED",
    );
    await root.createAcls({
      acl: [
        allow(AclResourceTypes.TOPIC, "t", "User:carol", AclOperationTypes.ALTER_CONFIGS),
        allow(AclResourceTypes.TOPIC, "t", "User:carol", AclOperationTypes.DELETE),
      ],
    });
    // ALTER_CONFIGS implies DESCRIBE_CONFIGS; DELETE implies DESCRIBE (so `t` is listed, `hidden` is not).
    await carol.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: "t" }] });
    expect(await carol.listTopics()).toEqual(["t"]);
    await carol.deleteTopics({ topics: ["t"] });
    await expectKafkaError(carol.describeGroups(["g"]), "GROUP_AUTHORIZATION_FAILED");
    await expectKafkaError(carol.fetchOffsets({ groupId: "g", topics: [] }), "GROUP_AUTHORIZATION_FAILED");
    await expectKafkaError(
      carol.setOffsets({ groupId: "g", topic: "new", partitions: [{ partition: 0, offset: "0" }] }),
      "GROUP_AUTHORIZATION_FAILED",
    );
    await expectKafkaError(carol.deleteGroups(["g"]), "GROUP_AUTHORIZATION_FAILED");
    expect(await carol.listGroups()).toEqual({ groups: [] });
  });
});

describe("admin: consumer groups", () => {
  it("lists, describes, fetches, sets (only when Empty), resets and deletes group offsets", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 2 }] }));
    const producer = kafka.producer();
    await producer.connect();
    await run(
      producer.send({ topic: "t", messages: [0, 1, 2, 3].map((i) => ({ value: `${i}`, partition: i % 2 })) }),
    );
    const consumer = kafka.consumer({ groupId: "g" });
    await consumer.connect();
    await consumer.subscribe({ topic: "t", fromBeginning: true });
    await run(consumer.poll());
    await run(consumer.commitOffsets());
    expect(await admin.listGroups()).toEqual({ groups: [{ groupId: "g", protocolType: "consumer" }] });
    const [g] = (await admin.describeGroups(["g"])).groups;
    expect(g).toMatchObject({ groupId: "g", state: "Stable", protocolType: "consumer" });
    expect(g!.members[0]!.assignment).toEqual([
      { topic: "t", partition: 0 },
      { topic: "t", partition: 1 },
    ]);
    const epoch = cluster.controller.image.partition("t", 0)!.leaderEpoch;
    expect(await admin.fetchOffsets({ groupId: "g", topics: ["t"] })).toEqual([
      {
        topic: "t",
        partitions: [
          { partition: 0, offset: "2", metadata: "", leaderEpoch: epoch },
          { partition: 1, offset: "2", metadata: "", leaderEpoch: epoch },
        ],
      },
    ]);
    await expectKafkaError(
      admin.setOffsets({ groupId: "g", topic: "t", partitions: [{ partition: 0, offset: "0" }] }),
      "NON_EMPTY_GROUP",
    );
    await expectKafkaError(admin.deleteGroups(["g"]), "NON_EMPTY_GROUP");
    await run(consumer.disconnect());
    expect((await admin.describeGroups(["g"])).groups[0]!.state).toBe("Empty");
    await admin.setOffsets({ groupId: "g", topic: "t", partitions: [{ partition: 0, offset: "1" }] });
    await admin.resetOffsets({ groupId: "g", topic: "t", earliest: true });
    expect(
      (await admin.fetchOffsets({ groupId: "g", topics: ["t"] }))[0]!.partitions.map((p) => p.offset),
    ).toEqual(["0", "0"]);
    await admin.resetOffsets({ groupId: "g", topic: "t" });
    expect((await admin.fetchOffsets({ groupId: "g" }))[0]!.partitions.map((p) => p.offset)).toEqual([
      "2",
      "2",
    ]);
    expect(await admin.deleteGroups(["g"])).toEqual([{ groupId: "g", errorCode: 0 }]);
    expect((await admin.describeGroups(["g"])).groups[0]!.state).toBe("Dead");
    expect(await admin.fetchOffsets({ groupId: "g", topics: ["t"], resolveOffsets: true })).toEqual([
      {
        topic: "t",
        partitions: [
          { partition: 0, offset: "2", metadata: null, leaderEpoch: -1 },
          { partition: 1, offset: "2", metadata: null, leaderEpoch: -1 },
        ],
      },
    ]);
  });
});
