import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../../src/index";
import {
  ACL_ENUMS,
  createServedTopics,
  kafkaClient,
  mirrorSaslConfig,
  startDestination,
  until,
} from "./helpers";

const { TOPIC, GROUP, CLUSTER, LITERAL, READ, DESCRIBE, ALLOW } = ACL_ENUMS;

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
  const mirrorUser = mirrorSaslConfig();
  const mirror = new KafkajsSourceCluster("group-acls", mirrorUser);
  const dest = startDestination(81);
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
    await dest.close();
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
  // This file alone grants the principal DESCRIBE on the CLUSTER, so taking it away here races no other file.
  it("verify with DESCRIBE on the CLUSTER taken away: the ACLs not compared, the records still compared equal", async () => {
    await dest.mirroring.admin.createMirror("verify-acls", {
      ...mirrorUser,
      "mirror.metadata.refresh.interval.ms": "3600000",
    });
    await dest.mirroring.admin.addTopics("verify-acls", topic);
    await until(async () => {
      const [row] = await dest.mirroring.admin.describe("verify-acls");
      return row?.state === "MIRRORING" && row.lag === 0n ? undefined : `${row?.state} ${row?.lag}`;
    });
    await admin.deleteAcls({ filters: [allow(CLUSTER, "kafka-cluster", DESCRIBE)] });
    await until(async () =>
      mirror.describeAcls().then(
        () => "DescribeAcls still allowed",
        () => undefined,
      ),
    );
    await expect(mirror.describeAcls()).rejects.toMatchObject({ errorName: "CLUSTER_AUTHORIZATION_FAILED" });

    // Before: the refusal was thrown out of verify as a whole, as if the source could not be reached.
    const v = await dest.mirroring.admin.verifyMirror("verify-acls");
    const byName = new Map(v.checks.map((c) => [c.check, c]));
    expect(byName.get("batches")).toMatchObject({ ok: true, differences: [] });
    expect(byName.get("offsets")).toMatchObject({ ok: true, differences: [] });
    expect(byName.get("topic ids")).toMatchObject({ ok: true, differences: [] });
    expect(byName.get("acls")).toMatchObject({
      ok: false,
      notCompared: true,
      compared: "not compared (the source refused DescribeAcls: CLUSTER_AUTHORIZATION_FAILED)",
    });
    expect(v.ok).toBe(false);
  });
});
