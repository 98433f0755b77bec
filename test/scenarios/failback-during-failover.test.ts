import { describe, expect, it, vi } from "vitest";
import { leaderBatches, mirroredOrders } from "./helpers";

/**
 * A -> B (`dr`, `orders`, 1 partition): B fails over and writes, A fails back and mirrors B (`back`), then A
 * fails over again with slow disks, so its partition stays STOPPING for seconds. B's failback while A is
 * STOPPING must wait for A's LME: before, A answered the LME of no failover (-1, or an earlier one) and B
 * cut its log there, removing committed records A holds too (they came back by refetching, but B's
 * consumers saw them vanish). Soak FC_SEED=9 x100 (`failback`).
 */
async function removingOnA() {
  const { t, a, b } = await mirroredOrders({ partitions: 1 });
  await t.run(b.mirroring.whenState("dr", "MIRRORING"));
  const producerA = a.kafka.producer({ idempotent: true });
  await t.run(producerA.connect());
  await t.run(producerA.send({ topic: "orders", messages: [{ value: "a-0" }, { value: "a-1" }], acks: -1 }));
  await t.run(b.mirroring.whenCaughtUp("dr"));
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.run(b.mirroring.whenState("dr", "STOPPED"));
  const producerB = b.kafka.producer({ idempotent: true });
  await t.run(producerB.connect());
  await t.run(producerB.send({ topic: "orders", messages: [{ value: "b-0" }, { value: "b-1" }], acks: -1 }));

  await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
  await t.run(a.mirroring.admin.addTopics("back", "orders"));
  await t.run(a.mirroring.whenCaughtUp("back"));

  for (const id of a.cluster.runningBrokers()) a.cluster.setDiskLatency(id, 3_000);
  const removal = a.mirroring.admin.removeTopics("back", "orders");
  // The topic is removed from `back`; its STOPPING record is still being written (slow disks).
  await t.advance(100);
  const fastDisks = () => {
    for (const id of a.cluster.runningBrokers()) a.cluster.setDiskLatency(id, 0);
  };
  return { t, a, b, removal, fastDisks };
}

/** `removingOnA` until A's partition is STOPPING (its LME not yet recorded), with B's log as it is then. */
async function stoppingOnA() {
  const setup = await removingOnA();
  const { t, a, b } = setup;
  await t.run(setup.removal);
  expect((await t.run(a.mirroring.admin.describe("back"))).map((r) => r.state)).toEqual(["STOPPING"]);
  const logOnB = b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
  const committedOnB = leaderBatches(b.cluster, "orders", 0).map((x) => x.hex);
  expect(logOnB.highWatermark).toBe(logOnB.logEndOffset);
  return { ...setup, logOnB, committedOnB };
}

describe("a failback while the new primary is still failing over", () => {
  it("is refused before anything changes, naming the source's failover, when local writes are checked", async () => {
    const { t, a, b, committedOnB, fastDisks } = await stoppingOnA();
    const refusal = t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await expect(refusal).rejects.toMatchObject({
      errorName: "MIRROR_FAILOVER_IN_PROGRESS",
      retriable: true,
    });
    await expect(refusal).rejects.toThrow(
      /source cluster of mirror 'dr' answered that mirror 'back', .* is failing over \(STOPPING\).*Nothing was changed/,
    );
    expect(b.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("dr.removed");
    expect(leaderBatches(b.cluster, "orders", 0).map((x) => x.hex)).toEqual(committedOnB);

    // Asked again once A is STOPPED, the failback goes ahead without --truncate-local-writes: A holds every
    // record B wrote, so nothing of B's is at risk, and B keeps its log.
    fastDisks();
    await t.run(a.mirroring.whenState("back", "STOPPED"));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "MIRRORING"));
    await t.run(b.mirroring.whenCaughtUp("dr"));
    const now = leaderBatches(b.cluster, "orders", 0).map((x) => x.hex);
    expect(now.slice(0, committedOnB.length)).toEqual(committedOnB);
    expect(now).toEqual(leaderBatches(a.cluster, "orders", 0).map((x) => x.hex));
  });

  it("waits in PREPARING for the source's LME, then truncates nothing it holds in common", async () => {
    const { t, a, b, logOnB, committedOnB, fastDisks } = await stoppingOnA();
    const cuts: bigint[] = [];
    vi.spyOn(logOnB, "truncateTo").mockImplementation(function (this: typeof logOnB, offset: bigint) {
      cuts.push(offset);
      return Object.getPrototypeOf(logOnB).truncateTo.call(this, offset);
    });
    vi.spyOn(logOnB, "truncateFullyAndStartAt").mockImplementation(function (
      this: typeof logOnB,
      offset: bigint,
    ) {
      cuts.push(-1n);
      return Object.getPrototypeOf(logOnB).truncateFullyAndStartAt.call(this, offset);
    });
    const leo = logOnB.logEndOffset;
    // The operator consents to losing local writes: the add skips its check and PREPARING asks the source.
    await t.run(b.mirroring.admin.addTopics("dr", "orders", { truncateLocalWrites: true }));
    await t.advance(500);
    expect(cuts).toEqual([]);
    // The source says "retry shortly": PREPARING asks again (every 500 ms), neither cutting nor failing.
    const [row] = await t.run(b.mirroring.admin.describe("dr"));
    expect(row).toMatchObject({ state: "PREPARING", errorMessage: null });

    fastDisks();
    await t.run(a.mirroring.whenState("back", "STOPPED"));
    await t.run(b.mirroring.whenState("dr", "MIRRORING"));
    await t.run(b.mirroring.whenCaughtUp("dr"));
    // A's LME is the epoch of B's own writes, which A mirrored: B cuts at its log end, nothing below it.
    expect(cuts.every((offset) => offset >= leo)).toBe(true);
    const now = leaderBatches(b.cluster, "orders", 0).map((x) => x.hex);
    expect(now.slice(0, committedOnB.length)).toEqual(committedOnB);
    expect(now).toEqual(leaderBatches(a.cluster, "orders", 0).map((x) => x.hex));
  });

  it("is answered as a failover in progress by the source from the removal on, before STOPPING is written", async () => {
    const { t, a, removal, fastDisks } = await removingOnA();
    expect((await t.run(a.mirroring.admin.describe("back"))).map((r) => r.state)).toEqual(["MIRRORING"]);
    const topicId = a.cluster.controller.image.topic("orders")!.topicId;
    const lastMirrorEpoch = async () => a.mirroring.asSource().lastMirrorEpoch!(topicId, 0);
    const answer = lastMirrorEpoch();
    await expect(answer).rejects.toMatchObject({ errorName: "MIRROR_FAILOVER_IN_PROGRESS", retriable: true });
    await expect(answer).rejects.toThrow(/mirror 'back', .* is failing over \(MIRRORING\)/);
    fastDisks();
    await t.run(removal);
    await t.run(a.mirroring.whenState("back", "STOPPED"));
    // Once STOPPED, the LME of this failover: the epoch of B's writes after B's own failover.
    const lme = await lastMirrorEpoch();
    const epochs = leaderBatches(a.cluster, "orders", 0).map((x) => x.epoch);
    expect(lme).toBeGreaterThan(0);
    expect(epochs).toContain(lme);
  });
});
