import { describe, expect, it } from "vitest";
import { mirroredOrders, topology } from "./helpers";

describe("mirror loops are refused at --add (issue 11 item 5)", () => {
  it("refuses adding, on A, a mirror of B's topic that B mirrors from A, and changes nothing", async () => {
    const { t, a, b } = await mirroredOrders();
    await t.run(b.mirroring.whenState("dr", "MIRRORING"));

    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    const before = a.cluster.controller.image.mirrors.get("back");
    await expect(t.run(a.mirroring.admin.addTopics("back", "orders"))).rejects.toMatchObject({
      errorName: "MIRROR_LOOP",
      retriable: false,
      topics: ["orders"],
      sourceMirror: "dr",
    });
    await t.advance(1_000);

    // Nothing changed on A: its topic is no mirror topic, takes writes, and the mirror's patterns are as before.
    expect(a.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBeUndefined();
    expect(a.cluster.controller.image.mirrors.get("back")).toEqual(before);
    expect(a.mirroring.coordinators.describe("back")).toEqual([]);
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    await t.run(producer.send({ topic: "orders", messages: [{ key: "k", value: "still writable" }] }));
  });

  it("accepts a chain A -> B -> C (the source mirrors the topic from a third cluster)", async () => {
    const t = topology(["a", "b", "c"]);
    const a = t.node("a");
    const b = t.node("b");
    const c = t.node("c");
    await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1 }] }));
    await t.advance(200);
    await t.run(b.mirroring.admin.createMirror("ab", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("ab", "orders"));
    await t.run(c.mirroring.admin.createMirror("bc", { "bootstrap.servers": "b:9092" }));
    const added = await t.run(c.mirroring.admin.addTopics("bc", "orders"));
    expect(added.topics).toEqual(["orders"]);
    await t.run(c.mirroring.whenState("bc", "MIRRORING"));
  });
});
