import { decodeRecords } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { leaderBatches, topology } from "./helpers";

describe("active-passive: A -> B, failover, failback", () => {
  it("mirrors byte for byte, fails over writable, and fails back with A truncated to B's log", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");

    await t.run(
      a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 2, replicationFactor: 3 }] }),
    );
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    for (let i = 0; i < 5; i++) {
      await t.run(producer.send({ topic: "orders", messages: [{ key: `k${i}`, value: `a-${i}` }] }));
    }

    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    const added = await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    expect(added.message).toBe("Added 1 topic(s) to mirror dr: [orders]");
    const topicIdA = a.cluster.controller.image.topic("orders")?.topicId;
    expect(b.cluster.controller.image.topic("orders")?.topicId).toBe(topicIdA);

    await t.until(async () => {
      const rows = await b.mirroring.admin.describe("dr");
      return rows.length === 2 && rows.every((r) => r.state === "MIRRORING" && r.lag === 0n);
    }, "dr caught up");

    for (const p of [0, 1]) {
      const onA = leaderBatches(a.cluster, "orders", p).map((x) => x.hex);
      const onB = leaderBatches(b.cluster, "orders", p).map((x) => x.hex);
      expect(onB).toEqual(onA);
    }

    // Read-only while mirroring.
    const producerB = b.kafka.producer({ idempotent: true });
    await t.run(producerB.connect());
    await expect(
      t.run(producerB.send({ topic: "orders", messages: [{ key: "x", value: "too early" }] })),
    ).rejects.toMatchObject({ errorName: "READ_ONLY_TOPIC" });

    // Failover.
    const removed = await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    expect(removed.message).toContain("orders");
    await t.until(
      async () => (await b.mirroring.admin.describe("dr")).every((r) => r.state === "STOPPED"),
      "STOPPED",
    );
    const rows = await b.mirroring.admin.describe("dr");
    for (const r of rows) expect(r.lastMirrorEpoch).toBeGreaterThanOrEqual(0);

    const producerB2 = b.kafka.producer({ idempotent: true });
    await t.run(producerB2.connect());
    await t.run(
      producerB2.send({ topic: "orders", messages: [{ key: "k9", value: "written on b" }], acks: -1 }),
    );
    for (const p of [0, 1]) {
      const log = b.cluster.leaderFor("orders", p).replica("orders", p)!.log;
      expect(log.lastStableOffset).toBe(log.highWatermark);
      const last = [...log.batches()].filter((x) => x.isControl).map((x) => x.controlType);
      expect(last).toContain(7);
    }

    // A writes a divergent tail it will lose on failback (it kept producing after B took over).
    await t.run(
      producer.send({ topic: "orders", messages: [{ key: "lost", value: "divergent on a", partition: 0 }] }),
    );

    const valuesOn = (cluster: typeof a.cluster) =>
      leaderBatches(cluster, "orders", 0).flatMap((x) =>
        x.batch.isControl ? [] : decodeRecords(x.batch).map((r) => r.value?.toString()),
      );
    expect(valuesOn(a.cluster)).toContain("divergent on a");

    // Failback: A mirrors from B.
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.until(async () => {
      const r = await a.mirroring.admin.describe("back");
      return r.length === 2 && r.every((x) => x.state === "MIRRORING" && x.lag === 0n);
    }, "back caught up");
    for (const p of [0, 1]) {
      const onA = leaderBatches(a.cluster, "orders", p).map((x) => x.hex);
      const onB = leaderBatches(b.cluster, "orders", p).map((x) => x.hex);
      expect(onA).toEqual(onB);
    }
    expect(valuesOn(a.cluster)).not.toContain("divergent on a");
    // B's PID reset barrier came along as-is, and B's local write is on A too.
    const everything = (cluster: typeof a.cluster) =>
      [0, 1].flatMap((p) => leaderBatches(cluster, "orders", p).map((x) => x.batch));
    const onA = everything(a.cluster);
    expect(onA.filter((x) => x.isControl && x.controlType === 7)).toHaveLength(2);
    expect(
      onA.flatMap((x) => (x.isControl ? [] : decodeRecords(x).map((r) => r.value?.toString()))),
    ).toContain("written on b");
  });
});
