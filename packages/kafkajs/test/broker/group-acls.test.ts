import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KafkajsSourceCluster } from "../../src/index";
import { createServedTopics, kafkaClient, until } from "./helpers";

// kafkajs's numeric ACL enums (AclResourceTypes, ResourcePatternTypes, AclOperationTypes, AclPermissionTypes).
const TOPIC = 2;
const GROUP = 3;
const CLUSTER = 4;
const LITERAL = 3;
const READ = 3;
const DESCRIBE = 8;
const ALLOW = 3;

/**
 * The mirror's principal may DESCRIBE the CLUSTER (the ACL sync needs it), so Kafka's ListGroups names every
 * group to it, but it may DESCRIBE only some groups: DescribeGroups answers GROUP_AUTHORIZATION_FAILED for
 * the others. The source's group listing leaves those out, as Kafka's listings do, instead of failing the
 * group offset sync of every group.
 */
describe("a secured source: group offsets of the groups the mirror's principal may describe", () => {
  const kafka = kafkaClient("group-acls-test");
  const admin = kafka.admin();
  const topic = "group-acls";
  const mirror = new KafkajsSourceCluster("group-acls", {
    "bootstrap.servers": inject("kafkaSaslBootstrap"),
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "PLAIN",
    "sasl.jaas.config":
      'org.apache.kafka.common.security.plain.PlainLoginModule required username="mirror" password="mirror-secret";',
  });
  const allow = (resourceType: number, resourceName: string, operation: number) => ({
    resourceType,
    resourceName,
    resourcePatternType: LITERAL,
    principal: "User:mirror",
    host: "*",
    operation,
    permissionType: ALLOW,
  });

  beforeAll(async () => {
    await admin.connect();
    await createServedTopics(admin, [{ topic, numPartitions: 1 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic, messages: [{ value: "a" }, { value: "b" }] });
    await producer.disconnect();
    for (const groupId of ["group-acls-visible", "group-acls-hidden"])
      await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: "1" }] });
    await admin.createAcls({
      acl: [
        allow(TOPIC, topic, READ),
        allow(CLUSTER, "kafka-cluster", DESCRIBE),
        allow(GROUP, "group-acls-visible", DESCRIBE),
      ],
    });
  });

  afterAll(async () => {
    await mirror.close();
    await admin.deleteAcls({
      filters: [
        allow(TOPIC, topic, READ),
        allow(CLUSTER, "kafka-cluster", DESCRIBE),
        allow(GROUP, "group-acls-visible", DESCRIBE),
      ],
    });
    await admin.disconnect();
  });

  it("lists the describable group with its offsets and leaves the other out, without failing", async () => {
    // The ACLs reach the broker's authorizer through the metadata log a moment after createAcls answered.
    await until(async () => {
      const groups = await mirror.listGroupOffsets().then(
        (all) => all.map((g) => g.groupId),
        (error: Error) => [`failed: ${error.message}`],
      );
      return groups.includes("group-acls-visible") ? undefined : groups.join(", ");
    }, 30_000);
    const groups = await mirror.listGroupOffsets();
    expect(groups.map((g) => g.groupId)).not.toContain("group-acls-hidden");
    expect(groups.find((g) => g.groupId === "group-acls-visible")).toEqual({
      groupId: "group-acls-visible",
      active: false,
      offsets: [{ topic, partition: 0, offset: 1n, leaderEpoch: -1, metadata: "" }],
    });
  });
});
