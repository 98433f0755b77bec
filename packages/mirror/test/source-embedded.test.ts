import { describe, expect, it } from "vitest";
import { EmbeddedSourceCluster } from "../src/source/embedded-source";
import {
  EmbeddedSourceConnector,
  EmbeddedSourceRegistry,
  UnknownBootstrapError,
} from "../src/source/embedded-source-registry";
import { mirrorEnv, produce, TOPIC, valuesBatch } from "./data-helpers";

describe("EmbeddedSourceCluster", () => {
  it("describes non-internal topics with ids, leaders, epochs and dynamic configs", async () => {
    const env = mirrorEnv({
      sourceBrokers: 2,
      sourceAssignment: [
        [0, 1],
        [1, 0],
      ],
      sourceConfigs: { "retention.ms": "1000" },
    });
    env.source.controller.createTopic({ name: "__consumer_offsets", replicaAssignment: [[0]] });
    const source = new EmbeddedSourceCluster(env.source);
    expect(await source.clusterId()).toBe("source-cluster-id-00001");
    expect(await source.describeTopics()).toEqual([
      {
        name: TOPIC,
        topicId: env.topicId,
        partitions: [
          { partition: 0, leaderId: 0, leaderEpoch: 0 },
          { partition: 1, leaderId: 1, leaderEpoch: 0 },
        ],
        configs: { "retention.ms": "1000" },
      },
    ]);
    const [withoutConfigs] = await source.describeTopics({ configsOf: (name) => name !== TOPIC });
    // Not asked for: unknown (no `configs`), never an empty set the sync would take for "all deleted".
    expect(withoutConfigs).toMatchObject({ name: TOPIC });
    expect(withoutConfigs?.configs).toBeUndefined();
    // The fetchers' leader lookup: the named topics alone, an unknown one left out.
    expect(await source.partitionLeaders([TOPIC, "missing", TOPIC])).toEqual([
      { topic: TOPIC, partition: 0, leaderId: 0, leaderEpoch: 0 },
      { topic: TOPIC, partition: 1, leaderId: 1, leaderEpoch: 0 },
    ]);
    expect(await source.partitionLeaders([])).toEqual([]);
  });

  it("fetches per partition: errors in the results, the size limit across partitions, the max throttle", async () => {
    const env = mirrorEnv({ sourceBrokers: 2, sourceAssignment: [[0], [1], [0]] });
    for (let i = 0; i < 4; i++) {
      await produce(env, valuesBatch(["x".repeat(100)]), 0);
      await produce(env, valuesBatch(["y".repeat(100)]), 2);
    }
    const source = new EmbeddedSourceCluster(env.source);
    const part = (partition: number, fetchOffset = 0n) => ({
      topic: TOPIC,
      partition,
      fetchOffset,
      lastFetchedEpoch: -1,
      currentLeaderEpoch: -1,
      maxBytes: 1 << 20,
    });
    const r = await source.fetch({
      clientId: "c1",
      brokerId: 0,
      maxBytes: 300,
      partitions: [part(0), part(1), part(2)],
    });
    const size = (i: number) => Buffer.concat(r.partitions[i]!.recordSlices as Buffer[]).length;
    expect(size(0)).toBeGreaterThan(0);
    expect(size(0)).toBeLessThanOrEqual(300);
    expect(r.partitions[1]?.error?.errorName).toBe("NOT_LEADER_OR_FOLLOWER");
    expect(size(0) + size(2)).toBeLessThanOrEqual(300 + 200);
    expect(r.throttleTimeMs).toBe(0);
    // Over its client id's quota, Kafka answers with the throttle time and without data (KIP-219).
    env.source.quotas.setQuota("fetch", "c1", 10);
    const throttled = await source.fetch({
      clientId: "c1",
      brokerId: 0,
      maxBytes: 300,
      partitions: [part(0), part(2)],
    });
    expect(throttled.throttleTimeMs).toBeGreaterThan(0);
    expect(throttled.partitions.map((p) => p.recordSlices.length)).toEqual([0, 0]);
    expect(throttled.partitions.map((p) => p.highWatermark)).toEqual([4n, 4n]);
    const oor = await source.fetch({
      clientId: "c2",
      brokerId: 0,
      maxBytes: 1 << 20,
      partitions: [part(0, 99n)],
    });
    expect(oor.partitions[0]?.error?.errorName).toBe("OFFSET_OUT_OF_RANGE");
    expect(oor.partitions[0]?.logStartOffset).toBe(0n);
    env.source.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 1 }]);
    await produce(env, valuesBatch(["epoch-1"]), 0);
    const diverged = await source.fetch({
      clientId: "c2",
      brokerId: 0,
      maxBytes: 1 << 20,
      partitions: [{ ...part(0, 5n), lastFetchedEpoch: 0 }],
    });
    expect(diverged.partitions[0]?.divergingEpoch).toEqual({ epoch: 0, endOffset: 4n });
    env.source.crashBroker(1);
    await expect(
      source.fetch({ clientId: "c2", brokerId: 1, maxBytes: 1, partitions: [part(1)] }),
    ).rejects.toMatchObject({ errorName: "BROKER_NOT_AVAILABLE" });
    expect(await source.listOffsets(TOPIC, 0, -2n)).toBe(0n);
    expect(await source.listOffsets(TOPIC, 0, -1n)).toBe(5n);
  });

  it("ListOffsets and OffsetsForLeaderEpoch need DESCRIBE on the topic, as on Kafka (READ alone is not asked)", async () => {
    const env = mirrorEnv();
    await produce(env, valuesBatch(["a", "b"]));
    const alice = new EmbeddedSourceCluster(env.source, { principal: "User:alice" });
    const acl = {
      resourceType: "TOPIC",
      resourceName: TOPIC,
      patternType: "LITERAL",
      principal: "User:alice",
      host: "*",
      permissionType: "ALLOW",
    } as const;
    env.source.authorizer.configure({ enabled: true });
    env.source.authorizer.createAcls([{ ...acl, operation: "DESCRIBE" }]);
    // DESCRIBE without READ: offsets are listed, fetches refused.
    expect(await alice.listOffsets(TOPIC, 0, -1n, env.topicId)).toBe(2n);
    expect(await alice.endOffsetForEpoch(TOPIC, 0, 0, env.topicId)).toEqual({
      leaderEpoch: 0,
      endOffset: 2n,
    });
    const fetched = await alice.fetch({
      clientId: "c",
      brokerId: env.source.leaderFor(TOPIC, 0).brokerId,
      maxBytes: 1024,
      partitions: [
        {
          topic: TOPIC,
          partition: 0,
          fetchOffset: 0n,
          lastFetchedEpoch: -1,
          currentLeaderEpoch: -1,
          maxBytes: 1024,
        },
      ],
    });
    expect(fetched.partitions[0]?.error?.errorName).toBe("TOPIC_AUTHORIZATION_FAILED");

    env.source.authorizer.deleteAcls([{ ...acl, operation: "DESCRIBE" }]);
    const refused = {
      errorName: "TOPIC_AUTHORIZATION_FAILED",
      message: expect.stringMatching(/User:alice may not DESCRIBE TOPIC/),
    };
    await expect(alice.listOffsets(TOPIC, 0, -1n, env.topicId)).rejects.toMatchObject(refused);
    await expect(alice.endOffsetForEpoch(TOPIC, 0, 0, env.topicId)).rejects.toMatchObject(refused);
    // Asked before the topic is looked up: a principal is not told which topics exist.
    await expect(alice.listOffsets("missing", 0, -1n)).rejects.toMatchObject(refused);
    // A broker's CLUSTER_ACTION is enough for OffsetsForLeaderEpoch (inter-broker before KIP-320), not ListOffsets.
    env.source.authorizer.createAcls([
      { ...acl, resourceType: "CLUSTER", resourceName: "kafka-cluster", operation: "CLUSTER_ACTION" },
    ]);
    expect(await alice.endOffsetForEpoch(TOPIC, 0, 0, env.topicId)).toEqual({
      leaderEpoch: 0,
      endOffset: 2n,
    });
    await expect(alice.listOffsets(TOPIC, 0, -1n, env.topicId)).rejects.toMatchObject(refused);
  });

  it("lists group offsets with activity, ACLs, and LMEs / mirrors from providers", async () => {
    const env = mirrorEnv();
    const groups = env.source.groups;
    groups.commitOffsets({
      groupId: "g1",
      offsets: [{ topic: TOPIC, partition: 0, offset: 3n, leaderEpoch: 0, metadata: "m" }],
    });
    env.source.authorizer.createAcls([
      {
        resourceType: "TOPIC",
        resourceName: TOPIC,
        patternType: "LITERAL",
        principal: "User:alice",
        host: "*",
        operation: "READ",
        permissionType: "ALLOW",
      },
    ]);
    const plain = new EmbeddedSourceCluster(env.source);
    expect(await plain.listGroupOffsets()).toEqual([
      {
        groupId: "g1",
        active: false,
        offsets: [{ topic: TOPIC, partition: 0, offset: 3n, leaderEpoch: 0, metadata: "m" }],
      },
    ]);
    expect(await plain.describeAcls()).toHaveLength(1);
    expect(await plain.lastMirrorEpoch(env.topicId, 0)).toBe(-1);
    expect(await plain.listMirrors()).toEqual([]);
    const mirroring = new EmbeddedSourceCluster(env.source, {
      lastMirrorEpoch: () => 7,
      listMirrors: () => [{ name: "back", sourceClusterId: "x", topics: [TOPIC] }],
    });
    expect(await mirroring.lastMirrorEpoch(env.topicId, 0)).toBe(7);
    expect(await mirroring.listMirrors()).toHaveLength(1);
  });
});

describe("EmbeddedSourceConnector", () => {
  it("resolves bootstrap.servers in the registry and names an unknown one", async () => {
    const env = mirrorEnv();
    const registry = new EmbeddedSourceRegistry();
    registry.register("source:9092", env.source);
    const connector = new EmbeddedSourceConnector(registry);
    const source = connector.connect("m1", { "bootstrap.servers": "nowhere:1, source:9092" });
    expect(await source.clusterId()).toBe(env.source.clusterId);
    let error: unknown;
    try {
      connector.connect("m2", { "bootstrap.servers": "other:9092" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnknownBootstrapError);
    expect((error as Error).message).toMatch(/no embedded cluster answers at other:9092/);
    expect((error as UnknownBootstrapError).errorName).toBe("INVALID_CONFIG");
  });
});
