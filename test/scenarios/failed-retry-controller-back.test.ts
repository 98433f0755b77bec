import { describe, expect, it } from "vitest";
import { expectOneRetryThenCopy, failback, failedOverWithDivergentTail } from "./failed-retry-helpers";
import {
  LONG_RETRY_BACKOFF,
  type Node,
  onlyRowOf,
  ordersBatches,
  ordersOn,
  type Topology,
  topology,
  transitionsOf,
  untilCaughtUp,
} from "./helpers";

/**
 * `orders` (3 records) on a, mirrored to b by `dr` and caught up, then failed over on b with b's controller
 * gone from the moment STOPPING asks it for the leader epoch bump, for longer than the 60 s a client waits:
 * the bump is refused with NOT_CONTROLLER throughout, and the partition is FAILED. `seen`: b's lifecycle
 * changes as `from->to`.
 */
async function failoverFailedOnNoController(t: Topology): Promise<{ a: Node; b: Node; seen: string[] }> {
  const [a, b] = [t.node("a"), t.node("b")];
  await ordersOn(t, a, 3);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await untilCaughtUp(t, b, "dr caught up");
  const seen = transitionsOf(b, "dr");
  const controller = b.cluster.controller;
  const bump = controller.bumpLeaderEpochsBatch.bind(controller);
  controller.bumpLeaderEpochsBatch = (requests) => {
    controller.setAvailable(false);
    controller.bumpLeaderEpochsBatch = bump;
    return bump(requests);
  };
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  const lost = t.clock.now();
  await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED on NOT_CONTROLLER");
  expect(t.clock.now() - lost).toBeGreaterThanOrEqual(60_000);
  expect(controller.isAvailable).toBe(false);
  expect(await onlyRowOf(b)).toMatchObject({
    retryAttempt: 0,
    errorMessage: expect.stringMatching(/controller/),
  });
  expect(seen).toEqual(["MIRRORING->STOPPING", "STOPPING->FAILED"]);
  return { a, b, seen };
}

/**
 * `orders` failed over to b (STOPPED), a kept writing (a divergent tail), and failed back to a by `back`
 * with a's controller gone the moment the failback's truncation asks it to record the cut, for longer than
 * the 60 s a client waits: the partition is FAILED in PREPARING. `seen`: a's lifecycle changes of `back`.
 */
async function failbackFailedOnNoController(t: Topology): Promise<{ a: Node; b: Node; seen: string[] }> {
  const [a, b] = [t.node("a"), t.node("b")];
  const controller = a.cluster.controller;
  const record = controller.recordReplicaTruncation.bind(controller);
  controller.recordReplicaTruncation = (...args) => {
    controller.setAvailable(false);
    controller.recordReplicaTruncation = record;
    return record(...args);
  };
  const seen = await failbackPreparing(t, a);
  await t.until(() => !controller.isAvailable, "a's controller gone at the truncation");
  const lost = t.clock.now();
  await t.until(async () => (await onlyRowOf(a, "back")).state === "FAILED", "FAILED on NOT_CONTROLLER");
  expect(t.clock.now() - lost).toBeGreaterThanOrEqual(60_000);
  expect(await onlyRowOf(a, "back")).toMatchObject({
    retryAttempt: 0,
    errorMessage: expect.stringMatching(/controller/),
  });
  expect(seen).toEqual(["UNKNOWN->PREPARING", "PREPARING->FAILED"]);
  return { a, b, seen };
}

/**
 * `orders` failed over to b (STOPPED), a kept writing (a divergent tail), and the failback to a by `back`
 * started (PREPARING: its truncation cuts that tail). Returns a's lifecycle changes of `back`.
 */
async function failbackPreparing(t: Topology, a: Node): Promise<string[]> {
  await failedOverWithDivergentTail(t);
  return failback(t, a);
}

/**
 * A step that asks the destination's controller, refused with NOT_CONTROLLER for the whole 60 s a client
 * waits, fails the partition: its FAILED waits for the controller, not for its backoff (minutes; an hour
 * here), and only a real return of the controller retries it early (each retry uses one of the budget's
 * attempts).
 */
describe("a FAILED partition whose step the destination's controller refused (NOT_CONTROLLER)", () => {
  it("a failover: the controller back, STOPPING goes on at once, not at the next metadata refresh", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, b, seen } = await failoverFailedOnNoController(t);

    b.cluster.controller.setAvailable(true);
    const back = t.clock.now();
    await t.until(
      async () => (await onlyRowOf(b)).state === "STOPPED",
      "STOPPED once the controller is back",
    );
    expect(t.clock.now() - back).toBeLessThan(1_000);
    expect(seen).toEqual([
      "MIRRORING->STOPPING",
      "STOPPING->FAILED",
      "FAILED->STOPPING",
      "STOPPING->STOPPED",
    ]);
    expect(ordersBatches(b).slice(0, -1)).toEqual(ordersBatches(a));
    expect(b.cluster.controller.image.partition("orders", 0)!.mirrorReadOnly).toBe(false);
  });

  it("a failback: the controller back, PREPARING's truncation goes on at once, not after the backoff, its budget kept", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, b, seen } = await failbackFailedOnNoController(t);
    await t.advance(120_000);
    expect(await onlyRowOf(a, "back")).toMatchObject({ state: "FAILED", retryAttempt: 0 });

    a.cluster.controller.setAvailable(true);
    const back = t.clock.now();
    await untilCaughtUp(t, a, "back caught up", "back");
    expect(t.clock.now() - back).toBeLessThan(1_000);
    expectOneRetryThenCopy(seen, a, b);
  });

  it("the controller back as the step fails, before its FAILED is recorded: the retry runs at once", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const [a, b] = [t.node("a"), t.node("b")];
    const controller = a.cluster.controller;
    const record = controller.recordReplicaTruncation.bind(controller);
    let lost: number | undefined;
    let back: number | undefined;
    // The first cut asked takes the controller away; the one asked at the end of the 60 s is refused, and
    // the controller is back right after it: nothing is FAILED yet to retry.
    controller.recordReplicaTruncation = (...args) => {
      if (lost === undefined) {
        lost = t.clock.now();
        controller.setAvailable(false);
      }
      try {
        return record(...args);
      } finally {
        if (back === undefined && t.clock.now() - lost >= 60_000) {
          back = t.clock.now();
          queueMicrotask(() => controller.setAvailable(true));
        }
      }
    };
    const seen = await failbackPreparing(t, a);
    await untilCaughtUp(t, a, "back caught up", "back");
    expect(back).toBeDefined();
    expect(t.clock.now() - back!).toBeLessThan(1_000);
    expectOneRetryThenCopy(seen, a, b);
  });

  it("the controller does not come back: the FAILED keeps its backoff, no attempt used", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, seen } = await failbackFailedOnNoController(t);
    await t.advance(600_000);
    expect(await onlyRowOf(a, "back")).toMatchObject({ state: "FAILED", retryAttempt: 0 });
    expect(seen).toEqual(["UNKNOWN->PREPARING", "PREPARING->FAILED"]);
  });

  it("a controller back for a moment: one retry per return, which waits for it in place and fails again", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, seen } = await failbackFailedOnNoController(t);
    const controller = a.cluster.controller;
    controller.setAvailable(true);
    controller.setAvailable(false);
    await t.until(async () => seen.length === 4, "the retry FAILED again");
    expect(seen.slice(2)).toEqual(["FAILED->PREPARING", "PREPARING->FAILED"]);
    // Away ever since: no other attempt used.
    await t.advance(600_000);
    expect(seen).toHaveLength(4);
    expect(await onlyRowOf(a, "back")).toMatchObject({ state: "FAILED", retryAttempt: 1 });

    controller.setAvailable(true);
    const back = t.clock.now();
    await untilCaughtUp(t, a, "back caught up", "back");
    expect(t.clock.now() - back).toBeLessThan(1_000);
  });
});
