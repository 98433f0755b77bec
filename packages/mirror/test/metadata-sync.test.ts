import { describe, expect, it } from "vitest";
import { InvalidMirrorConfigError } from "../src/admin/errors";
import { MirrorMetadataManager } from "../src/metadata/mirror-metadata-manager";
import { mirroredTopicConfigs, topicConfigSyncOps } from "../src/metadata/topic-configs";
import { MirrorMetrics } from "../src/metrics/mirror-metrics";
import { acl, appendRecords, MIRROR_CONFIG, mirrorEnv, sourceTopic } from "./meta-helpers";

async function setup(config: Record<string, string> = {}) {
  const env = mirrorEnv();
  await env.admin.createMirror("m1", { ...MIRROR_CONFIG, ...config });
  return env;
}

async function mirrorTopic(
  env: Awaited<ReturnType<typeof setup>>,
  topic: string,
  partitions = 1,
  configs = {},
) {
  sourceTopic(env.source, topic, partitions, configs);
  await env.admin.addTopics("m1", topic, { replicationFactor: 1 });
  env.coordinators.advance("PREPARING", "MIRRORING");
  env.coordinators.take();
}

const configsOf = (env: Awaited<ReturnType<typeof setup>>, topic: string) =>
  Object.fromEntries(env.destination.controller.image.topic(topic)!.configs);

describe("topic discovery and partitions", () => {
  it("creates and STARTs new source topics matching topics.include and not topics.exclude", async () => {
    const env = await setup({ "topics.include": "orders.*,payments", "topics.exclude": "orders\\.tmp.*" });
    const ordersId = sourceTopic(env.source, "orders.eu", 2, { "cleanup.policy": "compact" });
    sourceTopic(env.source, "orders.tmp1");
    sourceTopic(env.source, "payments");
    sourceTopic(env.source, "payments2");
    const report = await env.manager.refresh("m1");
    expect(report?.createdTopics).toEqual(["orders.eu", "payments"]);
    const created = env.destination.controller.image.topic("orders.eu")!;
    expect(created.topicId).toBe(ordersId);
    expect(created.partitions).toHaveLength(2);
    expect(configsOf(env, "orders.eu")).toEqual({ "cleanup.policy": "compact", "mirror.name": "m1" });
    expect(env.coordinators.take()).toEqual(["START orders.eu-0", "START orders.eu-1", "START payments-0"]);
    expect((await env.manager.refresh("m1"))?.createdTopics).toEqual([]);
  });

  it("asks the source for the configs of the topics it mirrors or would start mirroring, not of the rest", async () => {
    const env = await setup({ "topics.include": "orders.*" });
    await mirrorTopic(env, "orders", 1, { "retention.ms": "1000" });
    sourceTopic(env.source, "orders.new", 1, { "cleanup.policy": "compact" });
    sourceTopic(env.source, "audit", 1, { "retention.ms": "5" });
    sourceTopic(env.source, "payments");
    env.network.configsAsked.length = 0;
    const report = await env.manager.refresh("m1");
    expect(report?.createdTopics).toEqual(["orders.new"]);
    expect(env.network.configsAsked).toEqual([["orders", "orders.new"]]);
    expect(configsOf(env, "orders.new")).toEqual({ "cleanup.policy": "compact", "mirror.name": "m1" });
    // Adding by pattern asks for the matching topics' configs alone.
    env.network.configsAsked.length = 0;
    await env.admin.addTopics("m1", "pay.*", { replicationFactor: 1 });
    expect(env.network.configsAsked).toEqual([["payments"]]);
  });

  it("never recreates a removed (failed-over) topic, nor touches a local topic of the same name", async () => {
    const env = await setup({ "topics.include": ".*" });
    await mirrorTopic(env, "t");
    await env.admin.removeTopics("m1", "t");
    env.coordinators.advance("STOPPING", "STOPPED");
    env.coordinators.take();
    await env.manager.refresh("m1");
    expect(env.coordinators.take()).toEqual([]);
    expect(configsOf(env, "t")["mirror.name"]).toBe("m1.removed");
  });

  it("adds partitions the source gained and STARTs them", async () => {
    const env = await setup();
    await mirrorTopic(env, "t", 2);
    env.source.controller.createPartitions("t", 4);
    const report = await env.manager.refresh("m1");
    expect(report?.createdPartitions).toEqual([{ topic: "t", count: 4 }]);
    expect(env.destination.controller.image.topic("t")!.partitions).toHaveLength(4);
    expect(env.coordinators.take()).toEqual(["START t-2", "START t-3"]);
  });
});

describe("topic config sync", () => {
  it("copies the source's dynamic configs except the exclusion list, and removes deleted ones", async () => {
    const env = await setup();
    await mirrorTopic(env, "t", 1, { "retention.ms": "1000" });
    env.source.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "retention.ms", op: "SET", value: "2000" },
      { name: "segment.bytes", op: "SET", value: "100000" },
      { name: "min.insync.replicas", op: "SET", value: "2" },
      { name: "message.timestamp.type", op: "SET", value: "LogAppendTime" },
      { name: "unclean.leader.election.enable", op: "SET", value: "true" },
      { name: "leader.replication.throttled.replicas", op: "SET", value: "*" },
    ]);
    env.destination.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "min.insync.replicas", op: "SET", value: "1" },
      { name: "cleanup.policy", op: "SET", value: "compact" },
    ]);
    expect((await env.manager.refresh("m1"))?.alteredConfigs).toEqual(["t"]);
    expect(configsOf(env, "t")).toEqual({
      "retention.ms": "2000",
      "segment.bytes": "100000",
      "min.insync.replicas": "1",
      "mirror.name": "m1",
    });
    env.source.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "segment.bytes", op: "DELETE" },
    ]);
    await env.manager.refresh("m1");
    expect(configsOf(env, "t")).toEqual({
      "retention.ms": "2000",
      "min.insync.replicas": "1",
      "mirror.name": "m1",
    });
    expect((await env.manager.refresh("m1"))?.alteredConfigs).toEqual([]);
  });

  it("skips source configs this cluster does not know, including names every JavaScript object inherits", () => {
    const source = { "retention.ms": "5", "log.future.feature": "1", toString: "1", constructor: "1" };
    expect(mirroredTopicConfigs(source)).toEqual({ "retention.ms": "5" });
    expect(topicConfigSyncOps(source, new Map())).toEqual([{ name: "retention.ms", op: "SET", value: "5" }]);
  });

  it("compares a source value with the copy's as Kafka describes both: `+5` and `TRUE` are in sync with `5` and `true`", () => {
    const source = { "retention.ms": "+5", preallocate: "TRUE", "cleanup.policy": " compact , delete " };
    expect(mirroredTopicConfigs(source)).toEqual({
      "retention.ms": "5",
      preallocate: "true",
      "cleanup.policy": "compact,delete",
    });
    const copy = new Map(
      Object.entries({ "retention.ms": "5", preallocate: "true", "cleanup.policy": "compact,delete" }),
    );
    expect(topicConfigSyncOps(source, copy)).toEqual([]);
  });

  it("honours configs.sync.enable=false and topic.properties.exclude", async () => {
    const env = await setup({ "topic.properties.exclude": "segment.bytes" });
    await mirrorTopic(env, "t");
    env.source.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "segment.bytes", op: "SET", value: "100000" },
    ]);
    await env.manager.refresh("m1");
    expect(configsOf(env, "t")).toEqual({ "mirror.name": "m1" });
  });
});

describe("consumer group offset sync", () => {
  it("clamps offsets to [destination log start, log end], keeps the epoch, skips active and excluded groups", async () => {
    const env = await setup({ "groups.exclude": "private.*" });
    await mirrorTopic(env, "t", 2);
    appendRecords(env.destination, "t", 0, 5, 3);
    appendRecords(env.destination, "t", 1, 10, 4);
    env.destination.leaderFor("t", 1).deleteRecords("t", 1, 6n);
    env.source.groups.commitOffsets({
      groupId: "app",
      offsets: [
        { topic: "t", partition: 0, offset: 8n, leaderEpoch: 9 },
        { topic: "t", partition: 1, offset: 2n, leaderEpoch: 9 },
      ],
    });
    env.source.groups.commitOffsets({
      groupId: "ok",
      offsets: [{ topic: "t", partition: 0, offset: 2n, leaderEpoch: 7 }],
    });
    env.source.groups.commitOffsets({
      groupId: "private-1",
      offsets: [{ topic: "t", partition: 0, offset: 1n }],
    });
    env.source.groups.commitOffsets({ groupId: "busy", offsets: [{ topic: "t", partition: 0, offset: 1n }] });
    env.destination.groups.joinGroup({ groupId: "busy", topics: ["t"] });
    const report = await env.manager.refresh("m1");
    expect(report?.groups?.skippedActive).toEqual(["busy"]);
    const app = env.destination.groups.fetchOffsets("app");
    expect(app.get("t:0")).toMatchObject({ offset: 5n, leaderEpoch: 3 });
    expect(app.get("t:1")).toMatchObject({ offset: 6n, leaderEpoch: 4 });
    expect(env.destination.groups.fetchOffsets("ok").get("t:0")).toMatchObject({
      offset: 2n,
      leaderEpoch: 7,
    });
    expect(env.destination.groups.fetchOffsets("private-1").size).toBe(0);
    expect(env.destination.groups.fetchOffsets("busy").size).toBe(0);
    expect((await env.manager.refresh("m1"))?.groups?.synced).toEqual([]);
  });

  it("copies only offsets of the mirror's topics", async () => {
    const env = await setup();
    await mirrorTopic(env, "t");
    sourceTopic(env.source, "unmirrored");
    env.source.groups.commitOffsets({
      groupId: "app",
      offsets: [
        { topic: "t", partition: 0, offset: 0n },
        { topic: "unmirrored", partition: 0, offset: 0n },
      ],
    });
    await env.manager.refresh("m1");
    expect([...env.destination.groups.fetchOffsets("app").keys()]).toEqual(["t:0"]);
  });
});

describe("ACL sync", () => {
  it("creates the source's in-scope bindings and deletes ours that vanished, never local ones", async () => {
    const env = await setup({ "groups.include": "app.*" });
    await mirrorTopic(env, "t");
    const onTopic = acl("TOPIC", "t");
    const onGroup = acl("GROUP", "app-1");
    const prefixed = acl("TOPIC", "t", { patternType: "PREFIXED" });
    env.source.authorizer.createAcls([
      onTopic,
      onGroup,
      acl("GROUP", "other"),
      acl("TOPIC", "unmirrored"),
      prefixed,
      acl("TOPIC", "tx", { patternType: "PREFIXED" }),
      acl("TOPIC", "*"),
      acl("CLUSTER", "kafka-cluster", { operation: "ALTER" }),
    ]);
    const local = acl("TOPIC", "t", { principal: "User:bob", operation: "WRITE" });
    env.destination.authorizer.createAcls([local]);
    const first = await env.manager.refresh("m1");
    expect(first?.acls?.created).toEqual([onTopic, onGroup, prefixed]);
    expect(env.destination.authorizer.describeAcls()).toEqual([local, onTopic, onGroup, prefixed]);
    env.source.authorizer.deleteAcls([onTopic]);
    const second = await env.manager.refresh("m1");
    expect(second?.acls).toEqual({ created: [], deleted: [onTopic] });
    expect(env.destination.authorizer.describeAcls()).toEqual([local, onGroup, prefixed]);
  });

  it("syncs PREFIXED bindings that reach a mirror topic, so a principal keeps access after failover (issue 15)", async () => {
    const env = await setup();
    await mirrorTopic(env, "orders-eu");
    const ordersStar = acl("TOPIC", "orders-", { patternType: "PREFIXED", operation: "WRITE" });
    const groupStar = acl("GROUP", "app-", { patternType: "PREFIXED" });
    env.source.authorizer.createAcls([
      ordersStar,
      groupStar,
      acl("TOPIC", "payments-", { patternType: "PREFIXED" }),
    ]);
    await env.manager.refresh("m1");
    expect(env.destination.authorizer.describeAcls()).toEqual([ordersStar, groupStar]);
    // Enforced on the destination: alice may write orders-eu through the prefixed binding, not another topic.
    env.destination.authorizer.configure({ enabled: true });
    const request = { principal: "User:alice", operation: "WRITE" as const, resourceType: "TOPIC" as const };
    expect(env.destination.authorizer.authorize({ ...request, resourceName: "orders-eu" })).toBe(true);
    expect(env.destination.authorizer.authorize({ ...request, resourceName: "payments-eu" })).toBe(false);
  });

  it("syncs only what acls.include admits (the later KIP revision's rules)", async () => {
    const env = await setup({ "acls.include": "TOPIC;t.*;READ;ALLOW;*,GROUP;*;*;*;User:carol" });
    await mirrorTopic(env, "t");
    const read = acl("TOPIC", "t");
    const carolGroup = acl("GROUP", "g", { principal: "User:carol" });
    env.source.authorizer.createAcls([
      read,
      acl("TOPIC", "t", { operation: "WRITE" }),
      acl("TOPIC", "t", { permissionType: "DENY", principal: "User:eve" }),
      carolGroup,
      acl("GROUP", "g"),
    ]);
    await env.manager.refresh("m1");
    expect(env.destination.authorizer.describeAcls()).toEqual([read, carolGroup]);
    expect((await env.admin.verifyMirror("m1")).checks.find((c) => c.check === "acls")?.ok).toBe(true);
  });

  it("refuses a malformed acls.include rule at creation, naming it", async () => {
    const env = mirrorEnv();
    for (const [rule, why] of [
      ["TOPIC;t;READ;ALLOW", /has 4 field\(s\), not 5/],
      ["CLUSTER;*;*;*;*", /only TOPIC and GROUP/],
      ["TOPIC;t(;READ;ALLOW;*", /not a valid regex/],
      ["TOPIC;t;READS;ALLOW;*", /operation 'READS'/],
    ] as const) {
      const error = await env.admin
        .createMirror("m1", { ...MIRROR_CONFIG, "acls.include": rule })
        .catch((e) => e);
      expect(error, rule).toBeInstanceOf(InvalidMirrorConfigError);
      expect((error as Error).message).toMatch(why);
    }
    expect(env.admin.listMirrors()).toEqual([]);
  });

  it("keeps what the mirror owns in the destination's metadata, so a restarted engine still deletes it (issue 15)", async () => {
    const env = await setup();
    await mirrorTopic(env, "t");
    const synced = acl("TOPIC", "t");
    env.source.authorizer.createAcls([synced]);
    await env.manager.refresh("m1");
    expect(env.destination.authorizer.ownerOf(synced)).toBe("m1");
    // The engine restarts (a new manager, nothing in memory) while the source drops the binding.
    env.manager.close();
    env.source.authorizer.deleteAcls([synced]);
    const restarted = new MirrorMetadataManager({
      destination: env.destination,
      sources: env.sources,
      coordinators: env.coordinators,
      scheduler: env.scheduler,
      leadsMirror: () => true,
      metrics: new MirrorMetrics({ coordinators: env.coordinators }),
    });
    const report = await restarted.refresh("m1");
    expect(report?.acls).toEqual({ created: [], deleted: [synced] });
    expect(env.destination.authorizer.describeAcls()).toEqual([]);
    // And the ownership is a metadata record, replayed with the rest after a node restart.
    expect(
      env.destination.controller
        .metadataLog()
        .some((e) => e.record.type === "Acl" && e.record.owner === "m1"),
    ).toBe(true);
    restarted.close();
  });

  it("syncs no ACL while no topic is ACTIVE: GROUP bindings survive the old primary's clean-up after a failover, and a pause", async () => {
    const env = await setup();
    await mirrorTopic(env, "t");
    const onGroup = acl("GROUP", "app");
    const onTopic = acl("TOPIC", "t");
    env.source.authorizer.createAcls([onGroup, onTopic]);
    await env.manager.refresh("m1");
    expect(env.destination.authorizer.describeAcls()).toEqual([onGroup, onTopic]);
    // Paused: the source drops the group's binding; the destination keeps it until the topic resumes.
    await env.admin.pauseTopics("m1", "t");
    env.coordinators.advance("PAUSING", "PAUSED");
    env.source.authorizer.deleteAcls([onGroup]);
    expect((await env.manager.refresh("m1"))?.acls).toBeUndefined();
    expect(env.destination.authorizer.describeAcls()).toEqual([onGroup, onTopic]);
    await env.admin.resumeTopics("m1", "t");
    env.coordinators.advance("PAUSED", "MIRRORING");
    expect((await env.manager.refresh("m1"))?.acls).toEqual({ created: [], deleted: [onGroup] });
    // Failed over: the clients moved here, and the old primary's ACLs are cleaned up. Theirs stay here.
    env.source.authorizer.createAcls([onGroup]);
    await env.manager.refresh("m1");
    await env.admin.removeTopics("m1", "t");
    env.coordinators.advance("STOPPING", "STOPPED");
    env.source.authorizer.deleteAcls([onGroup, onTopic]);
    await env.manager.refresh("m1");
    expect(env.destination.authorizer.describeAcls()).toEqual([onTopic, onGroup]);
  });

  it("honours acls.sync.enable=false", async () => {
    const env = await setup({ "acls.sync.enable": "false" });
    await mirrorTopic(env, "t");
    env.source.authorizer.createAcls([acl("TOPIC", "t")]);
    await env.manager.refresh("m1");
    expect(env.destination.authorizer.describeAcls()).toEqual([]);
  });
});

describe("paused topics", () => {
  it("get no config, partition, group offset or ACL sync", async () => {
    const env = await setup();
    await mirrorTopic(env, "t");
    await env.admin.pauseTopics("m1", "t");
    env.coordinators.advance("PAUSING", "PAUSED");
    env.coordinators.take();
    env.source.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "retention.ms", op: "SET", value: "5" },
    ]);
    env.source.controller.createPartitions("t", 3);
    env.source.groups.commitOffsets({ groupId: "app", offsets: [{ topic: "t", partition: 0, offset: 0n }] });
    env.source.authorizer.createAcls([acl("TOPIC", "t")]);
    const report = await env.manager.refresh("m1");
    expect(report).toMatchObject({ alteredConfigs: [], createdPartitions: [], commands: [] });
    expect(configsOf(env, "t")).toEqual({ "mirror.name": "m1.paused" });
    expect(env.destination.controller.image.topic("t")!.partitions).toHaveLength(1);
    expect(env.destination.groups.fetchOffsets("app").size).toBe(0);
    expect(env.destination.authorizer.describeAcls()).toEqual([]);
    await env.admin.resumeTopics("m1", "t");
    await env.manager.refresh("m1");
    expect(configsOf(env, "t")).toEqual({ "mirror.name": "m1", "retention.ms": "5" });
  });
});

describe("sync errors", () => {
  it("are counted per mirror and kind and never stop the other steps", async () => {
    const env = await setup();
    await mirrorTopic(env, "t");
    env.source.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "retention.ms", op: "SET", value: "5" },
    ]);
    const controller = env.destination.controller;
    const original = controller.incrementalAlterConfigs.bind(controller);
    controller.incrementalAlterConfigs = () => {
      throw new Error("controller unavailable");
    };
    env.source.groups.commitOffsets({ groupId: "app", offsets: [{ topic: "t", partition: 0, offset: 0n }] });
    await env.manager.refresh("m1");
    controller.incrementalAlterConfigs = original;
    expect(env.metrics.syncErrors("m1")).toEqual([{ mirror: "m1", kind: "TopicConfigSyncError", count: 1 }]);
    expect(env.destination.groups.fetchOffsets("app").get("t:0")?.offset).toBe(0n);
  });
});
