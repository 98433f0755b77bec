import { describe, expect, it } from "vitest";
import { leaderBatches, onlyRowOf, ordersOn, type Topology, topology, untilCaughtUp } from "./helpers";

/** A FAILED retry backoff far longer than the test, and a budget of 3 attempts. */
const LONG_BACKOFF = { baseMs: 3_600_000, capMs: 3_600_000, maxAttempts: 3 };

/**
 * `orders` mirrored to b, removed and re-added, its re-add's cut refused (FENCED_LEADER_EPOCH) by a leader
 * whose metadata lags the controller's: orders-0's leader owes a mirror cut it cannot make (its disk is full:
 * a cut is recorded for every replica first, as `Broker.truncateTo` does), so it applies no change of the
 * partition, and the controller bumps its leader epoch: the metadata names it leader at an epoch it does not
 * know. Returns once the partition is FAILED and a second passed, with that leader and its replica.
 */
async function refusedByLaggingLeader(t: Topology) {
  const [a, b] = [t.node("a"), t.node("b")];
  await ordersOn(t, a, 3);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await untilCaughtUp(t, b, "dr caught up");
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "STOPPED");

  const controller = b.cluster.controller;
  const { leader, leaderEpoch } = controller.image.partition("orders", 0)!;
  const replica = b.cluster.localBroker(leader)!.replica("orders", 0)!;
  const end = replica.log.logEndOffset;
  b.cluster.setDiskFull(leader, true);
  controller.recordReplicaTruncation("orders", 0, {
    leader,
    leaderEpoch,
    truncationOffset: end,
    full: false,
    previousLogEndOffset: end,
  });
  controller.bumpLeaderEpochs([{ topic: "orders", partition: 0, minLeaderEpoch: leaderEpoch + 1 }]);
  expect([replica.isLeader, replica.leaderEpoch]).toEqual([true, leaderEpoch]);

  // The re-add's cut is refused (FENCED_LEADER_EPOCH) by that leader, and every retry's alike: retried
  // at once, its 3 attempts were gone in 60 ms (FAILED for good, waiting for an operator).
  const seen: string[] = [];
  const off = b.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED preparing");
  await t.advance(1_000);
  off();
  expect(seen).toEqual(["STOPPED->PREPARING", "PREPARING->FAILED"]);
  expect(await onlyRowOf(b)).toMatchObject({
    state: "FAILED",
    retryAttempt: 0,
    errorMessage: expect.stringMatching(/is not the leader/),
  });
  return { a, b, leader, leaderEpoch, replica };
}

/** The batches of `orders-0` on `cluster`'s leader, as `offset:hex`. */
const batches = (cluster: Parameters<typeof leaderBatches>[0]) =>
  leaderBatches(cluster, "orders", 0).map((x) => `${x.offset}:${x.hex}`);

describe("a step refused by a destination leader the metadata still names, at the same epoch", () => {
  it("its FAILED waits out its backoff, its budget kept; another leader elected retries it at once", async () => {
    const t = topology(["a", "b"], { retry: LONG_BACKOFF });
    const { a, b, leader } = await refusedByLaggingLeader(t);
    const controller = b.cluster.controller;

    // Another leader: the re-add goes on at once on it.
    b.cluster.crashBroker(leader);
    const elected = t.clock.now();
    expect(controller.image.partition("orders", 0)!.leader).not.toBe(leader);
    await untilCaughtUp(t, b, "dr caught up on the new leader");
    expect(t.clock.now() - elected).toBeLessThan(1_000);
    expect(batches(b.cluster)).toEqual(batches(a.cluster));
  });

  it("that leader catches up with the controller's epoch (its disk freed, its owed cut made): the re-add goes on at once on it", async () => {
    const t = topology(["a", "b"], { retry: LONG_BACKOFF });
    const { a, b, leader, leaderEpoch, replica } = await refusedByLaggingLeader(t);
    const controller = b.cluster.controller;

    // The disk freed, the leader makes the cut it owes (its next reconcile, after the replica fetch
    // backoff) and takes the controller's epoch: still the same leader, at the same epoch in the metadata.
    b.cluster.setDiskFull(leader, false);
    const freed = t.clock.now();
    await t.until(() => replica.leaderEpoch === leaderEpoch + 1, "the leader at the controller's epoch");
    expect(controller.image.partition("orders", 0)).toMatchObject({ leader, leaderEpoch: leaderEpoch + 1 });
    // The step it refused runs again at once: not up to an hour later, at the backoff's end.
    await untilCaughtUp(t, b, "dr caught up on the same leader");
    expect(t.clock.now() - freed).toBeLessThan(1_000);
    expect(controller.image.partition("orders", 0)!.leader).toBe(leader);
    expect(batches(b.cluster)).toEqual(batches(a.cluster));
  });
});
