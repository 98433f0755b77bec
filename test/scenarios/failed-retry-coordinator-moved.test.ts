import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import {
  coordinatorOf,
  expectOneRetryThenCopy,
  failback,
  failedOverWithDivergentTail,
  failedPreparingSourceDown,
} from "./failed-retry-helpers";
import {
  failForGood,
  LONG_RETRY_BACKOFF,
  onlyRowOf,
  ordersBatches,
  ordersOn,
  type Topology,
  topology,
  transitionsOf,
  untilCaughtUp,
} from "./helpers";

/**
 * The failback of `orders`, with a's controller gone from the moment its truncation asks it to record the
 * cut, for longer than the 60 s a client waits: FAILED in PREPARING on NOT_CONTROLLER (its first attempt).
 * Nothing drives a FAILED PREPARING again (a removal's STOP would: the failover's own sequence). Then the
 * broker that coordinates it crashes, with no controller yet to elect another `__mirror_state` leader.
 * `seen`: a's lifecycle changes of `back`.
 */
async function failbackFailedThenCoordinatorCrashed(t: Topology) {
  const { a, b } = await failedOverWithDivergentTail(t);
  const controller = a.cluster.controller;
  const record = controller.recordReplicaTruncation.bind(controller);
  controller.recordReplicaTruncation = (...args) => {
    controller.setAvailable(false);
    controller.recordReplicaTruncation = record;
    return record(...args);
  };
  const seen = await failback(t, a);
  await t.until(async () => (await onlyRowOf(a, "back")).state === "FAILED", "FAILED on NOT_CONTROLLER");
  expect(await onlyRowOf(a, "back")).toMatchObject({
    retryAttempt: 0,
    errorMessage: expect.stringMatching(/controller/),
  });
  const coordinator = coordinatorOf(a, "back");
  a.cluster.crashBroker(coordinator);
  expect(controller.isAvailable).toBe(false);
  return { a, b, seen, coordinator };
}

/**
 * The failback of `orders` (on broker 2 alone, which does not coordinate it), broker 2 crashed as its
 * truncation asks the controller to record the cut: FAILED with no leader (its first attempt). Then the
 * broker that coordinates it crashes, and the new coordinator loads it while orders-0 has no leader.
 * `seen`: a's lifecycle changes of `back`.
 */
async function failbackFailedLeaderlessThenCoordinatorCrashed(t: Topology) {
  const { a, b } = await failedOverWithDivergentTail(t, 2);
  const coordinator = coordinatorOf(a, "back");
  expect(coordinator).not.toBe(2);
  const controller = a.cluster.controller;
  const record = controller.recordReplicaTruncation.bind(controller);
  controller.recordReplicaTruncation = (...args) => {
    a.cluster.crashBroker(2);
    controller.recordReplicaTruncation = record;
    return record(...args);
  };
  const seen = await failback(t, a);
  await t.until(async () => (await onlyRowOf(a, "back")).state === "FAILED", "FAILED with no leader");
  expect((await onlyRowOf(a, "back")).errorMessage).toMatch(/broker 2 .* is not the leader \(leader -1/);
  expect(controller.image.partition("orders", 0)!.leader).toBe(-1);

  a.cluster.crashBroker(coordinator);
  expect(coordinatorOf(a, "back")).not.toBe(coordinator);
  await t.advance(120_000);
  expect(await onlyRowOf(a, "back")).toMatchObject({ state: "FAILED", retryAttempt: 0 });
  expect(seen).toEqual(["UNKNOWN->PREPARING", "PREPARING->FAILED"]);
  return { a, b, seen };
}

/**
 * What a FAILED waits out (the destination's controller, its leader, the source) is known only to the
 * coordinator that committed it: the record keeps no cause (spec §6). A coordinator that loads it (the one
 * before it crashed or lost its `__mirror_state` leadership) retries it at the first end of a fault it may
 * wait out, heard while it loaded or since, at most once; without that, it waited its whole backoff (an hour
 * here) after the fault was long over. A leader elected while the partition had one ends nothing (a rolling
 * restart's moves: see failed-retry-fault-ended), and a FAILED for good is left to the operator.
 */
describe("a FAILED partition whose coordinator moved while it waited", () => {
  it("a controller outage: the controller's return elects the new coordinator, which retries at once as it loads", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, b, seen, coordinator } = await failbackFailedThenCoordinatorCrashed(t);

    a.cluster.controller.setAvailable(true);
    const back = t.clock.now();
    expect(coordinatorOf(a, "back")).not.toBe(coordinator);
    await untilCaughtUp(t, a, "back caught up under the new coordinator", "back");
    expect(t.clock.now() - back).toBeLessThan(1_000);
    expectOneRetryThenCopy(seen, a, b);
  });

  it("a load started again by a newer election of the same broker keeps the controller's return it heard", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, b, seen, coordinator } = await failbackFailedThenCoordinatorCrashed(t);
    const controller = a.cluster.controller;

    controller.setAvailable(true);
    const next = coordinatorOf(a, "back");
    expect(next).not.toBe(coordinator);
    // Before its load ran (the next scheduler turn): its `__mirror_state` partition's leader epoch bumped,
    // the same leader (a reassignment's), restarts the load. The controller's return is still unheard.
    const topicId = controller.image.topic("orders")!.topicId;
    const statePartition = mirrorStatePartitionFor({ mirror: "back", topicId, partition: 0 }, 4);
    controller.bumpLeaderEpochs([
      { topic: MIRROR_STATE_TOPIC, partition: statePartition, minLeaderEpoch: 0 },
    ]);
    expect(coordinatorOf(a, "back")).toBe(next);
    const back = t.clock.now();
    await untilCaughtUp(t, a, "back caught up under the new coordinator", "back");
    expect(t.clock.now() - back).toBeLessThan(1_000);
    expectOneRetryThenCopy(seen, a, b);
  });

  it("a controller gone again as the new coordinator loads: it waits, no attempt used, and retries at the controller's return", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, b, seen, coordinator } = await failbackFailedThenCoordinatorCrashed(t);
    const controller = a.cluster.controller;

    // Back for as long as the election of the new coordinator takes: it loads with no controller.
    controller.setAvailable(true);
    controller.setAvailable(false);
    expect(coordinatorOf(a, "back")).not.toBe(coordinator);
    await t.advance(120_000);
    expect(await onlyRowOf(a, "back")).toMatchObject({ state: "FAILED", retryAttempt: 0 });
    expect(seen).toEqual(["UNKNOWN->PREPARING", "PREPARING->FAILED"]);

    controller.setAvailable(true);
    const back = t.clock.now();
    await untilCaughtUp(t, a, "back caught up once the controller is back", "back");
    expect(t.clock.now() - back).toBeLessThan(1_000);
    expectOneRetryThenCopy(seen, a, b);
  });

  it("a leader: its partition offline as the new coordinator loads, the FAILED retries once a leader is elected", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, b, seen } = await failbackFailedLeaderlessThenCoordinatorCrashed(t);

    a.cluster.startBroker(2);
    const elected = t.clock.now();
    await untilCaughtUp(t, a, "back caught up once orders-0 has a leader", "back");
    expect(t.clock.now() - elected).toBeLessThan(1_000);
    expectOneRetryThenCopy(seen, a, b);
  });

  it("its partition still offline as the controller comes back: no retry (it would fail at once, an attempt used), the leader's election retries it", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, b, seen } = await failbackFailedLeaderlessThenCoordinatorCrashed(t);
    const controller = a.cluster.controller;

    controller.setAvailable(false);
    await t.advance(1_000);
    controller.setAvailable(true);
    await t.advance(60_000);
    expect(await onlyRowOf(a, "back")).toMatchObject({ state: "FAILED", retryAttempt: 0 });
    expect(seen).toEqual(["UNKNOWN->PREPARING", "PREPARING->FAILED"]);

    a.cluster.startBroker(2);
    const elected = t.clock.now();
    await untilCaughtUp(t, a, "back caught up once orders-0 has a leader", "back");
    expect(t.clock.now() - elected).toBeLessThan(1_000);
    expectOneRetryThenCopy(seen, a, b);
  });

  it("a source down: the new coordinator waits, no attempt used, and retries at the source's return", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, b } = await failedPreparingSourceDown(t);
    const seen = transitionsOf(b, "dr");
    // Longer than the metadata refresh interval (30 s): every broker of b found the source down.
    await t.advance(45_000);
    const coordinator = coordinatorOf(b, "dr");
    b.cluster.crashBroker(coordinator);
    expect(coordinatorOf(b, "dr")).not.toBe(coordinator);
    await t.advance(1_000);
    expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: 0 });
    expect(seen).toEqual([]);

    for (const id of [0, 1, 2]) a.cluster.startBroker(id);
    const back = t.clock.now();
    await untilCaughtUp(t, b, "dr caught up once a is back");
    // The next refresh (within its 30 s interval) found the source back.
    expect(t.clock.now() - back).toBeLessThan(31_000);
    expect(seen).toEqual(["FAILED->PREPARING", "PREPARING->MIRRORING"]);
    expect(ordersBatches(b)).toEqual(ordersBatches(a));
  });

  it("a FAILED for good (non-retryable): the new coordinator leaves it to the operator, whatever ends", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const [a, b] = [t.node("a"), t.node("b")];
    await ordersOn(t, a, 3);
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await untilCaughtUp(t, b, "dr caught up");
    await failForGood(t, b);
    const seen = transitionsOf(b, "dr");
    const coordinator = coordinatorOf(b, "dr");
    b.cluster.crashBroker(coordinator);
    expect(coordinatorOf(b, "dr")).not.toBe(coordinator);

    // The controller away and back, orders-0's leader elected anew: each ends a fault a FAILED may wait out.
    const controller = b.cluster.controller;
    controller.setAvailable(false);
    await t.advance(1_000);
    controller.setAvailable(true);
    b.cluster.startBroker(coordinator);
    await t.advance(1_000);
    b.cluster.crashBroker(controller.image.partition("orders", 0)!.leader);
    await t.advance(600_000);
    expect(seen).toEqual([]);
    expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: -1 });
  });
});
