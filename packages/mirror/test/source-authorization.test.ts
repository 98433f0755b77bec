import type { AclBinding } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { EmbeddedSourceCluster } from "../src/source/embedded-source";
import { acl, appendRecords, MIRROR_CONFIG, mirrorEnv, sourceTopic } from "./meta-helpers";

/**
 * An embedded source with its authorizer on answers a mirror's principal what Kafka would: listings leave
 * out what it may not DESCRIBE (KafkaApis' Metadata for all topics, OffsetFetch, DescribeGroups), configs
 * need DESCRIBE_CONFIGS, DescribeAcls needs DESCRIBE on the CLUSTER.
 */
describe("an embedded source's listings, as the mirror's principal may see them", () => {
  const allow = (
    resourceType: AclBinding["resourceType"],
    name: string,
    operation: AclBinding["operation"],
  ) => acl(resourceType, name, { operation });

  /** Topics orders (READ, DESCRIBE_CONFIGS), payments (DESCRIBE) and secret (nothing); groups app and hidden. */
  function securedSource() {
    const env = mirrorEnv();
    sourceTopic(env.source, "orders", 1, { "retention.ms": "1000" });
    sourceTopic(env.source, "payments", 1, { "retention.ms": "2000" });
    sourceTopic(env.source, "secret", 1, { "retention.ms": "3000" });
    env.source.groups.commitOffsets({
      groupId: "app",
      offsets: [
        { topic: "orders", partition: 0, offset: 1n },
        { topic: "secret", partition: 0, offset: 2n },
      ],
    });
    env.source.groups.commitOffsets({
      groupId: "hidden",
      offsets: [{ topic: "orders", partition: 0, offset: 3n }],
    });
    env.source.authorizer.configure({ enabled: true });
    env.source.authorizer.createAcls([
      allow("TOPIC", "orders", "READ"),
      allow("TOPIC", "orders", "DESCRIBE_CONFIGS"),
      allow("TOPIC", "payments", "DESCRIBE"),
      allow("GROUP", "app", "DESCRIBE"),
    ]);
    return { env, alice: new EmbeddedSourceCluster(env.source, { principal: "User:alice" }) };
  }

  it("lists the topics the principal may DESCRIBE, with the configs of those it may DESCRIBE_CONFIGS", async () => {
    const { env, alice } = securedSource();
    const topics = await alice.describeTopics();
    expect(topics.map((t) => t.name)).toEqual(["orders", "payments"]);
    expect(topics[0]?.configs).toEqual({ "retention.ms": "1000" });
    // Refused DescribeConfigs: unknown (the sync leaves the destination's as they are), not an empty set.
    expect(topics[1]?.configs).toBeUndefined();
    // A super user (the node's own principal) sees everything.
    env.source.authorizer.configure({ enabled: true, superUsers: ["User:alice"] });
    const all = await alice.describeTopics();
    expect(all.map((t) => t.name)).toEqual(["orders", "payments", "secret"]);
    expect(all[2]?.configs).toEqual({ "retention.ms": "3000" });
  });

  it("gives no partition leaders of a topic the principal may not DESCRIBE", async () => {
    const { alice } = securedSource();
    expect((await alice.partitionLeaders(["orders", "secret"])).map((p) => p.topic)).toEqual(["orders"]);
  });

  it("lists the offsets of the groups and topics the principal may DESCRIBE", async () => {
    const { env, alice } = securedSource();
    expect(await alice.listGroupOffsets()).toEqual([
      {
        groupId: "app",
        active: false,
        offsets: [{ topic: "orders", partition: 0, offset: 1n, leaderEpoch: -1, metadata: "" }],
      },
    ]);
    env.source.authorizer.configure({ enabled: true, superUsers: ["User:alice"] });
    expect((await alice.listGroupOffsets()).map((g) => g.groupId)).toEqual(["app", "hidden"]);
  });

  it("refuses DescribeAcls without DESCRIBE on the CLUSTER", async () => {
    const { env, alice } = securedSource();
    await expect(alice.describeAcls()).rejects.toMatchObject({
      errorName: "CLUSTER_AUTHORIZATION_FAILED",
      message: expect.stringMatching(/User:alice may not DESCRIBE CLUSTER/),
    });
    env.source.authorizer.createAcls([allow("CLUSTER", "kafka-cluster", "DESCRIBE")]);
    expect(await alice.describeAcls()).toHaveLength(5);
  });

  it("refuses a fetch of a topic the principal may not READ even where the size limit leaves it no bytes, telling no offsets", async () => {
    const { env, alice } = securedSource();
    appendRecords(env.source, "orders", 0, 10);
    appendRecords(env.source, "payments", 0, 1);
    const leader = env.source.leaderFor("orders", 0);
    const at = (topic: string) => ({
      topic,
      partition: 0,
      fetchOffset: 0n,
      lastFetchedEpoch: -1,
      currentLeaderEpoch: -1,
      maxBytes: 1 << 20,
    });
    // orders takes every byte of the response: payments (DESCRIBE only) is still answered as Kafka does.
    const { partitions } = await alice.fetch({
      clientId: "c",
      brokerId: leader.brokerId,
      maxBytes: 10,
      partitions: [at("orders"), at("payments")],
    });
    expect(partitions[0]?.error).toBeUndefined();
    expect(partitions[0]?.recordSlices.length).toBeGreaterThan(0);
    expect(partitions[1]).toMatchObject({
      error: { errorName: "TOPIC_AUTHORIZATION_FAILED" },
      recordSlices: [],
      highWatermark: -1n,
      logStartOffset: -1n,
    });
  });

  it("a mirror with a topic pattern neither adds nor discovers a matching topic its principal may not DESCRIBE", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "orders.eu");
    sourceTopic(env.source, "orders.us");
    sourceTopic(env.source, "orders.secret");
    env.source.authorizer.configure({ enabled: true });
    // The test network's source presents no principal: User:ANONYMOUS, as an unauthenticated Kafka client.
    const anonymous = (name: string, operation: AclBinding["operation"]) =>
      acl("TOPIC", name, { principal: "User:ANONYMOUS", operation });
    env.source.authorizer.createAcls([anonymous("orders.eu", "READ"), anonymous("orders.us", "READ")]);
    await env.admin.createMirror("m1", { ...MIRROR_CONFIG, "topics.include": "orders.*" });

    const added = await env.admin.addTopics("m1", "orders\\.(eu|secret)", { replicationFactor: 1 });
    expect(added.topics).toEqual(["orders.eu"]);
    await expect(env.admin.addTopics("m1", "orders\\.secret")).rejects.toThrow(
      /No topic on the source of mirror 'm1' matches 'orders\\.secret'/,
    );
    const report = await env.manager.refresh("m1");
    expect(report?.createdTopics).toEqual(["orders.us"]);
    expect(env.destination.controller.image.topic("orders.secret")).toBeUndefined();
    expect(env.coordinators.take()).toEqual(["START orders.eu-0", "START orders.us-0"]);
  });
});
