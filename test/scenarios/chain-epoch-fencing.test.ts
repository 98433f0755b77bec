import type { KafkaCluster } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { leaderBatches, topology } from "./helpers";

/** The batch bytes of `orders-0` on a cluster's leader, by offset: compares the copies. */
const copyOf = (cluster: KafkaCluster) =>
  leaderBatches(cluster, "orders", 0).map((b) => `${b.offset}:${b.hex}`);

/** Spec §4's invariant on a cluster: its leader epoch is at or above every batch's epoch. */
function expectEpochInvariant(cluster: KafkaCluster): void {
  const leaderEpoch = cluster.controller.image.partition("orders", 0)!.leaderEpoch;
  for (const b of leaderBatches(cluster, "orders", 0)) expect(b.epoch).toBeLessThanOrEqual(leaderEpoch);
}

describe("EPOCH_FENCING along a chain and back (spec §4): bounded, never once per batch", () => {
  it("c0 -> c1 -> c2 while c0's epoch climbs, then c1 fails over and c0 fails back from it", async () => {
    const t = topology(["c0", "c1", "c2"]);
    const [c0, c1, c2] = [t.node("c0"), t.node("c1"), t.node("c2")];
    const fences = { c0: 0, c1: 0, c2: 0 };
    for (const name of ["c0", "c1", "c2"] as const) {
      t.node(name).mirroring.subscribeTransitions((x) => {
        if (x.record.state === "EPOCH_FENCING") fences[name]++;
      });
    }
    await t.run(
      c0.kafka
        .admin()
        .createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
    );
    const send = async (producer: ReturnType<typeof c0.kafka.producer>, values: string[]) => {
      for (const value of values)
        await t.run(producer.send({ topic: "orders", messages: [{ key: "k", value }], acks: -1 }));
    };
    const p0 = c0.kafka.producer({});
    await t.run(p0.connect());
    await send(p0, ["first"]);
    await t.run(c1.mirroring.admin.createMirror("up", { "bootstrap.servers": "c0:9092" }));
    await t.run(c1.mirroring.admin.addTopics("up", "orders"));
    await t.run(c1.mirroring.whenCaughtUp("up"));
    await t.run(c2.mirroring.admin.createMirror("down", { "bootstrap.servers": "c1:9092" }));
    await t.run(c2.mirroring.admin.addTopics("down", "orders"));
    await t.run(c2.mirroring.whenCaughtUp("down"));

    // Six leader epoch jumps of 7 on c0, two batches after each: twelve batches, six new epochs.
    for (let round = 0; round < 6; round++) {
      const epoch = c0.cluster.controller.image.partition("orders", 0)!.leaderEpoch;
      c0.cluster.controller.bumpLeaderEpochs([{ topic: "orders", partition: 0, minLeaderEpoch: epoch + 7 }]);
      await send(p0, [`r${round}a`, `r${round}b`]);
      await t.advance(2000);
    }
    await t.run(c1.mirroring.whenCaughtUp("up"));
    await t.run(c2.mirroring.whenCaughtUp("down"));
    // Each hop fenced at most once per new epoch (the proactive bump spares some), never once per batch.
    expect(fences.c1).toBeGreaterThan(0);
    expect(fences.c1).toBeLessThanOrEqual(6);
    expect(fences.c2).toBeLessThanOrEqual(6);
    for (const node of [c1, c2]) expectEpochInvariant(node.cluster);
    expect(copyOf(c1.cluster)).toEqual(copyOf(c0.cluster));
    expect(copyOf(c2.cluster)).toEqual(copyOf(c1.cluster));

    // c1 fails over (its bump goes 10 above the LME) and writes; c0 fails back from c1: c0 fences once on
    // c1's epoch, and c2 follows c1's writes.
    await t.run(c1.mirroring.admin.removeTopics("up", "orders"));
    await t.run(c1.mirroring.whenState("up", "STOPPED"));
    const p1 = c1.kafka.producer({});
    await t.run(p1.connect());
    await send(p1, ["c1 one", "c1 two"]);
    await t.run(c0.mirroring.admin.createMirror("back", { "bootstrap.servers": "c1:9092" }));
    await t.run(c0.mirroring.admin.addTopics("back", "orders"));
    await t.run(c0.mirroring.whenCaughtUp("back"));
    await send(p1, ["c1 three"]);
    await t.advance(2000);
    await t.run(c0.mirroring.whenCaughtUp("back"));
    await t.run(c2.mirroring.whenCaughtUp("down"));
    expect(fences.c0).toBe(1);
    for (const node of [c0, c1, c2]) expectEpochInvariant(node.cluster);
    expect(copyOf(c0.cluster)).toEqual(copyOf(c1.cluster));
    expect(copyOf(c2.cluster)).toEqual(copyOf(c1.cluster));
  });
});
