import { describe, expect, it } from "vitest";
import { mirroredOrders, topology } from "./helpers";

describe("the catch-up barrier of a planned failover (issue 11 item 4)", () => {
  it("whenCaughtUp waits for records the source acknowledged just before the call; the failover keeps them", async () => {
    const { t, a, b } = await mirroredOrders();
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    await t.run(producer.send({ topic: "orders", messages: [{ key: "k0", value: "first" }], acks: -1 }));
    await t.run(b.mirroring.whenCaughtUp("dr"));
    await t.advance(2_000); // the fetchers idle with a last-seen high watermark that is about to go stale

    // Acknowledged by A (acks=all), then straight to the barrier and the failover.
    const messages = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `tail-${i}` }));
    await t.run(producer.send({ topic: "orders", messages, acks: -1 }));
    const hw = [0, 1].map((p) => a.cluster.leaderFor("orders", p).replica("orders", p)!.log.highWatermark);
    await t.run(b.mirroring.whenCaughtUp("dr"));
    const leo = [0, 1].map((p) => b.cluster.leaderFor("orders", p).replica("orders", p)!.log.logEndOffset);
    expect(leo).toEqual(hw);
    const rows = await t.run(b.mirroring.admin.describe("dr"));
    expect(rows.map((r) => [r.sourceOffset, r.destinationOffset, r.lag])).toEqual(hw.map((h) => [h, h, 0n]));

    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    for (const p of [0, 1]) {
      const onA = [...a.cluster.leaderFor("orders", p).replica("orders", p)!.log.batches()]
        .filter((x) => !x.isControl)
        .map((x) => x.buffer.toString("hex"));
      const onB = [...b.cluster.leaderFor("orders", p).replica("orders", p)!.log.batches()]
        .filter((x) => !x.isControl)
        .map((x) => x.buffer.toString("hex"));
      expect(onB).toEqual(onA);
    }
  });

  it("describe's lag is the source's answer now, not the fetcher's last view", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1 }] }));
    await t.advance(200);
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await t.run(b.mirroring.whenCaughtUp("dr"));
    await t.advance(2_000);
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    await t.run(producer.send({ topic: "orders", messages: [{ key: "k", value: "v" }], acks: -1 }));
    const [row] = await b.mirroring.admin.describe("dr");
    expect(row?.sourceOffset).toBe(1n);
  });
});
