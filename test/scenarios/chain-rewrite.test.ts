import { describe, expect, it } from "vitest";
import { leaderBatches, topology } from "./helpers";

/**
 * A chain c0 -> c1 -> c2 of `orders` (one partition). c1 fails over and writes records of its own, which c2
 * copies; c0's leader epoch is then raised to exactly the epoch of c1's writes and c0 writes as many
 * offsets as c1 did. When c1 is re-added from c0, its log holds c0's batches where c2 holds c1's old ones:
 * same offsets, same epoch, so KIP-320's diverging-epoch check finds no difference. Only c1's record of
 * the cut (its log rewrite) can tell c2.
 */
async function chainWithCollidingEpochs() {
  const t = topology(["c0", "c1", "c2"], { brokers: 1 });
  const [c0, c1, c2] = [t.node("c0"), t.node("c1"), t.node("c2")];
  await t.run(c0.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1 }] }));
  await t.advance(200);
  const p0 = c0.kafka.producer({ idempotent: true });
  await t.run(p0.connect());
  await t.run(p0.send({ topic: "orders", messages: [{ key: "k", value: "from c0 before" }], acks: -1 }));
  await t.run(c1.mirroring.admin.createMirror("up", { "bootstrap.servers": "c0:9092" }));
  await t.run(c1.mirroring.admin.addTopics("up", "orders"));
  await t.run(c1.mirroring.whenCaughtUp("up"));
  await t.run(c2.mirroring.admin.createMirror("down", { "bootstrap.servers": "c1:9092" }));
  await t.run(c2.mirroring.admin.addTopics("down", "orders"));
  await t.run(c2.mirroring.whenCaughtUp("down"));

  // c1 fails over and writes; c2 copies its PID reset and its records.
  await t.run(c1.mirroring.admin.removeTopics("up", "orders"));
  await t.run(c1.mirroring.whenState("up", "STOPPED"));
  const p1 = c1.kafka.producer({ idempotent: true });
  await t.run(p1.connect());
  const local = ["c1 local 1", "c1 local 2"].map((value) => ({ key: "k", value }));
  await t.run(p1.send({ topic: "orders", messages: local, acks: -1 }));
  await t.run(c2.mirroring.whenCaughtUp("down"));
  const c1Writes = leaderBatches(c1.cluster, "orders", 0).slice(1);
  const epoch = c1Writes[0]!.epoch;
  expect(c1Writes.every((b) => b.epoch === epoch)).toBe(true);

  // c0 reaches that epoch and writes as many offsets as c1 did since the failover.
  c0.cluster.controller.bumpLeaderEpochs([{ topic: "orders", partition: 0, minLeaderEpoch: epoch }]);
  await t.advance(500);
  const written = Number(c1.cluster.leaderFor("orders", 0).replica("orders", 0)!.log.logEndOffset - 1n);
  const others = Array.from({ length: written }, (_, i) => ({ key: "k", value: `c0 after ${i}` }));
  await t.run(p0.send({ topic: "orders", messages: others, acks: -1 }));
  return { t, c0, c1, c2, epoch };
}

type Chain = Awaited<ReturnType<typeof chainWithCollidingEpochs>>;

/**
 * Re-adds `orders` on c1 from c0 while c2's copy is paused, so c2 never fetches while c1's log is short (a
 * diverging-epoch answer would then cut it by chance), and resumes c2 once c1 holds c0's batches.
 */
async function rewriteWhilePaused(t: Chain["t"], c1: Chain["c1"], c2: Chain["c2"]): Promise<void> {
  await t.run(c2.mirroring.admin.pauseTopics("down", "orders"));
  await t.run(c2.mirroring.whenState("down", "PAUSED"));
  await t.run(c1.mirroring.admin.addTopics("up", "orders", { truncateLocalWrites: true }));
  await t.run(c1.mirroring.whenCaughtUp("up"));
  await t.run(c2.mirroring.admin.resumeTopics("down", "orders"));
  await t.run(c2.mirroring.whenState("down", "MIRRORING"));
}

describe("a chain whose middle hop is re-added from a source writing at the epoch of its own writes", () => {
  it("the copy downstream drops the hop's old batches and holds what the hop holds, byte for byte", async () => {
    const { t, c0, c1, c2, epoch } = await chainWithCollidingEpochs();
    const before = leaderBatches(c2.cluster, "orders", 0);
    await rewriteWhilePaused(t, c1, c2);
    // The collision is real: c1 now holds c0's batch at offset 1, of the epoch c2's batch there has.
    const onC1 = leaderBatches(c1.cluster, "orders", 0);
    expect(onC1.map((b) => b.hex)).toEqual(leaderBatches(c0.cluster, "orders", 0).map((b) => b.hex));
    expect(onC1[1]).toMatchObject({ offset: 1n, epoch });
    expect(before[1]).toMatchObject({ offset: 1n, epoch });
    expect(before[1]!.hex).not.toBe(onC1[1]!.hex);

    await t.run(c2.mirroring.whenCaughtUp("down"));
    await t.advance(2_000);
    expect(leaderBatches(c2.cluster, "orders", 0).map((b) => b.hex)).toEqual(onC1.map((b) => b.hex));
  });

  it("a copy that already agrees with the rewritten log keeps it (nothing is fetched again)", async () => {
    const { t, c1, c2 } = await chainWithCollidingEpochs();
    await rewriteWhilePaused(t, c1, c2);
    await t.run(c2.mirroring.whenCaughtUp("down"));
    await t.advance(2_000);
    const log = () => c2.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
    const held = [...log().batches()].map((b) => b.buffer);
    // c2's fetcher is assigned again (a pause and resume): it compares once more and cuts nothing.
    await t.run(c2.mirroring.admin.pauseTopics("down", "orders"));
    await t.run(c2.mirroring.whenState("down", "PAUSED"));
    await t.run(c2.mirroring.admin.resumeTopics("down", "orders"));
    await t.run(c2.mirroring.whenState("down", "MIRRORING"));
    await t.advance(2_000);
    const after = [...log().batches()].map((b) => b.buffer);
    expect(after.length).toBe(held.length);
    // The very same stored bytes: not truncated and fetched again.
    expect(after.every((b, i) => b.buffer === held[i]!.buffer && b.byteOffset === held[i]!.byteOffset)).toBe(
      true,
    );
  });
});
