import type { AclBinding } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { topology } from "./helpers";

/** Alice's group `app` may read (a GROUP binding: not tied to a topic, so both mirrors' scopes reach it). */
const APP_GROUP: AclBinding = {
  resourceType: "GROUP",
  resourceName: "app",
  patternType: "LITERAL",
  principal: "User:alice",
  host: "*",
  operation: "READ",
  permissionType: "ALLOW",
};

/**
 * Fan-in (A -> C and B -> C, distinct topics) with one consumer group id on both sources and an ACL
 * binding on only one: each mirror syncs its own topics' offsets into the group, and the binding A's mirror
 * synced is no difference of B's mirror, whose sync never deletes it.
 */
describe("fan-in of one group id and one ACL binding", () => {
  it("syncs both sources' offsets of the group, and each mirror verifies clean", async () => {
    const t = topology(["a", "b", "c"]);
    const a = t.node("a");
    const b = t.node("b");
    const c = t.node("c");
    for (const [node, topic] of [
      [a, "orders-a"],
      [b, "orders-b"],
    ] as const) {
      await t.run(node.kafka.admin().createTopics({ topics: [{ topic, numPartitions: 1 }] }));
      const producer = node.kafka.producer({ idempotent: true });
      await t.run(producer.connect());
      for (let i = 0; i < 3; i++)
        await t.run(producer.send({ topic, messages: [{ key: `k${i}`, value: `${topic} ${i}` }] }));
      node.cluster.groups.commitOffsets({
        groupId: "app",
        offsets: [{ topic, partition: 0, offset: node === a ? 2n : 1n }],
      });
    }
    a.cluster.authorizer.createAcls([APP_GROUP]);
    await t.advance(200);
    for (const [mirror, source, topic] of [
      ["from-a", "a:9092", "orders-a"],
      ["from-b", "b:9092", "orders-b"],
    ] as const) {
      await t.run(c.mirroring.admin.createMirror(mirror, { "bootstrap.servers": source }));
      await t.run(c.mirroring.admin.addTopics(mirror, topic));
      await t.run(c.mirroring.whenCaughtUp(mirror));
    }
    for (const mirror of ["from-a", "from-b", "from-a", "from-b"])
      await t.run(c.mirroring.refreshNow(mirror));

    const offsets = c.cluster.groups.fetchOffsets("app");
    expect(offsets.get("orders-a:0")?.offset).toBe(2n);
    expect(offsets.get("orders-b:0")?.offset).toBe(1n);
    expect(c.cluster.authorizer.describeAcls()).toEqual([APP_GROUP]);
    expect(c.cluster.authorizer.ownerOf(APP_GROUP)).toBe("from-a");
    for (const mirror of ["from-a", "from-b"]) {
      const verified = await t.run(c.mirroring.admin.verifyMirror(mirror));
      expect(
        verified.checks.filter((check) => !check.ok).map((check) => [check.check, check.differences]),
        mirror,
      ).toEqual([]);
    }
    // A binding made here by hand stays a difference, as before.
    c.cluster.authorizer.createAcls([{ ...APP_GROUP, principal: "User:mallory" }]);
    const tampered = await t.run(c.mirroring.admin.verifyMirror("from-b"));
    expect(tampered.checks.find((check) => check.check === "acls")?.differences).toEqual([
      "only here: ALLOW User:mallory READ on GROUP LITERAL app",
    ]);
  });
});
