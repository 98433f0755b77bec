import { type MirrorPartitionKey, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import {
  leaderBatches,
  type Node,
  onlyRowOf,
  ordersOn,
  type Topology,
  topology,
  untilCaughtUp,
} from "./helpers";

/**
 * A failover while the destination has no active controller (a KRaft quorum electing one): STOPPING's leader
 * epoch bump and STOPPED's clearing of the read-only flag are refused with NOT_CONTROLLER. They are asked
 * again in place, as Kafka's clients retry NOT_CONTROLLER (100 ms growing to 1 s, up to the 60 s API
 * timeout): each FAILED detour grew the backoff, and the topic stayed read-only (a failback waiting on it)
 * for up to minutes after the controller was back (soak `failback` FC_SEED=651).
 */

/**
 * `orders` on a with 5 records (and `also`, 4 empty partitions, when given), mirrored to b by `dr` and caught
 * up; b's lifecycle changes as `from->to`.
 */
async function mirrored(also?: string): Promise<{ t: Topology; b: Node; seen: string[] }> {
  const t = topology(["a", "b"]);
  const a = t.node("a");
  const b = t.node("b");
  await ordersOn(t, a, 5);
  if (also !== undefined)
    await t.run(a.kafka.admin().createTopics({ topics: [{ topic: also, numPartitions: 4 }] }));
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", also === undefined ? "orders" : `orders|${also}`));
  await untilCaughtUp(t, b, "dr caught up");
  const seen: string[] = [];
  b.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
  return { t, b, seen };
}

/**
 * Fails `orders` over on b with b's controller gone from the moment STOPPING asks it for the leader epoch
 * bump (STOPPING's first step, the read-only flag, is already done), or the moment the partition enters
 * STOPPED (its step is the flag's clearing).
 */
async function failOverLosingControllerAt(t: Topology, b: Node, state: "STOPPING" | "STOPPED") {
  const controller = b.cluster.controller;
  const bump = controller.bumpLeaderEpochsBatch.bind(controller);
  if (state === "STOPPING") {
    controller.bumpLeaderEpochsBatch = (requests) => {
      controller.setAvailable(false);
      controller.bumpLeaderEpochsBatch = bump;
      return bump(requests);
    };
  }
  const off = b.mirroring.subscribeTransitions((x) => {
    if (state === "STOPPED" && x.record.state === state) controller.setAvailable(false);
  });
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.until(() => !controller.isAvailable, `the controller gone at ${state}`);
  off();
}

/**
 * `orders` failed over on b (STOPPED), and a, the old primary, kept writing: a tail b never had, which the
 * failback must cut (the controller records a cut first). `seen`: a's lifecycle changes as `from->to`.
 */
async function failedOverWithTailOnA() {
  const { t, b } = await mirrored();
  const a = t.node("a");
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "dr STOPPED");
  const producer = a.kafka.producer();
  await t.run(producer.connect());
  await t.run(producer.send({ topic: "orders", messages: [{ value: "divergent on a" }], acks: -1 }));
  const seen: string[] = [];
  a.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
  return { t, a, b, seen };
}

/**
 * Fails `orders` back to a (mirror `back` from b) with a's controller gone the moment the failback's
 * truncation asks it to record the cut of a's divergent tail; returns once the controller is gone.
 */
async function failBackLosingControllerAtTruncation(t: Topology, a: Node, seen: string[]) {
  const controller = a.cluster.controller;
  const record = controller.recordReplicaTruncation.bind(controller);
  controller.recordReplicaTruncation = (...args) => {
    if (seen.includes("UNKNOWN->PREPARING")) controller.setAvailable(false);
    controller.recordReplicaTruncation = record;
    return record(...args);
  };
  await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
  await t.run(a.mirroring.admin.addTopics("back", "orders"));
  await t.until(() => !controller.isAvailable, "a's controller gone at the truncation");
  return controller;
}

/** The error `deleteMirror("dr")` on `b` fails with; undefined when the mirror was deleted. */
function deleteRefusal(t: Topology, b: Node): Promise<unknown> {
  return t.run(
    b.mirroring.admin.deleteMirror("dr").then(
      () => undefined,
      (e: unknown) => e,
    ),
  );
}

/** `orders-0` on the node's leader, batch by batch. */
const batches = (node: Node) => leaderBatches(node.cluster, "orders", 0).map((x) => x.hex);

/** Whether a local write to b's `orders` is accepted (false: refused, the topic still read-only). */
async function writable(t: Topology, b: Node): Promise<boolean> {
  const producer = b.kafka.producer();
  await t.run(producer.connect());
  try {
    await t.run(producer.send({ topic: "orders", messages: [{ value: "local" }], acks: -1 }));
    return true;
  } catch (error) {
    expect(String(error)).toMatch(/READ_ONLY_TOPIC|read-only/);
    return false;
  } finally {
    await t.run(producer.disconnect());
  }
}

describe("a failover while the destination's controller fails over", () => {
  it("STOPPING's bump waits for the controller in place: no FAILED, STOPPED within a second of its return", async () => {
    const { t, b, seen } = await mirrored();
    await failOverLosingControllerAt(t, b, "STOPPING");
    await t.advance(10_000);
    expect((await onlyRowOf(b)).state).toBe("STOPPING");
    expect(await writable(t, b)).toBe(false);

    b.cluster.controller.setAvailable(true);
    const back = t.clock.now();
    await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "dr STOPPED");
    expect(t.clock.now() - back).toBeLessThanOrEqual(1_500);
    await t.until(() => writable(t, b), "orders writable");
    expect(t.clock.now() - back).toBeLessThanOrEqual(1_500);
    expect(seen).toEqual(["MIRRORING->STOPPING", "STOPPING->STOPPED"]);
  });

  it("STOPPED's flag clearing waits for the controller in place: read-only meanwhile, writable within a second of its return", async () => {
    const { t, b, seen } = await mirrored();
    await failOverLosingControllerAt(t, b, "STOPPED");
    await t.advance(10_000);
    expect((await onlyRowOf(b)).state).toBe("STOPPED");
    expect(await writable(t, b)).toBe(false);

    b.cluster.controller.setAvailable(true);
    const back = t.clock.now();
    await t.until(() => writable(t, b), "orders writable");
    expect(t.clock.now() - back).toBeLessThanOrEqual(1_500);
    expect(seen).toEqual(["MIRRORING->STOPPING", "STOPPING->STOPPED"]);
  });

  it("an outage longer than the 60 s a client waits fails the step (retryable, naming the controller), and the retry ends STOPPED", async () => {
    const { t, b, seen } = await mirrored();
    await failOverLosingControllerAt(t, b, "STOPPING");
    const lost = t.clock.now();
    await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "dr FAILED");
    expect(t.clock.now() - lost).toBeGreaterThanOrEqual(60_000);
    const [view] = b.mirroring.coordinators.describe("dr");
    expect(view?.errorMessage).toMatch(/controller/);
    expect(view?.retryAttempt).toBeGreaterThanOrEqual(0);

    b.cluster.controller.setAvailable(true);
    await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "dr STOPPED after the retry");
    expect(await writable(t, b)).toBe(true);
    expect(seen.slice(0, 2)).toEqual(["MIRRORING->STOPPING", "STOPPING->FAILED"]);
  });
});

describe("a failback while the old primary's controller fails over", () => {
  it("PREPARING's truncation waits for the controller in place: no FAILED, MIRRORING within a second of its return", async () => {
    const { t, a, b, seen } = await failedOverWithTailOnA();
    const aEnd = a.cluster.leaderFor("orders", 0).replica("orders", 0)!.log.logEndOffset;
    // The controller is lost just as the failback's truncation asks it to record the cut.
    const controller = await failBackLosingControllerAtTruncation(t, a, seen);
    await t.advance(10_000);
    expect((await onlyRowOf(a, "back")).state).toBe("PREPARING");
    // Nothing was cut while the controller could not record the cut; the topic is read-only meanwhile.
    expect(a.cluster.leaderFor("orders", 0).replica("orders", 0)!.log.logEndOffset).toBe(aEnd);
    expect(await writable(t, a)).toBe(false);

    controller.setAvailable(true);
    const back = t.clock.now();
    await untilCaughtUp(t, a, "back caught up", "back");
    expect(t.clock.now() - back).toBeLessThanOrEqual(1_500);
    expect(seen.slice(0, 2)).toEqual(["UNKNOWN->PREPARING", "PREPARING->MIRRORING"]);
    expect(seen).not.toContain("PREPARING->FAILED");
    // The divergent tail was cut: a is b's copy, batch for batch.
    expect(batches(a)).toEqual(batches(b));
  });
});

describe("the read-only flag set as PREPARING begins, refused with NOT_CONTROLLER", () => {
  it("PREPARING's loop check sets the flag and waits for the controller: no later step before the engine holds it, no FAILED", async () => {
    const { t, a, b, seen } = await failedOverWithTailOnA();
    const before = batches(a);
    const controller = a.cluster.controller;
    a.mirroring.subscribeTransitions((x) => {
      if (x.record.state === "PREPARING" && seen.length === 1) controller.setAvailable(false);
    });
    // Every cut the failback asks the controller to record while it is away (PREPARING's truncation).
    let cutsAsked = 0;
    const record = controller.recordReplicaTruncation.bind(controller);
    controller.recordReplicaTruncation = (...args) => {
      if (!controller.isAvailable) cutsAsked++;
      return record(...args);
    };
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.until(() => !controller.isAvailable, "a's controller gone at PREPARING");
    await t.advance(10_000);
    expect((await onlyRowOf(a, "back")).state).toBe("PREPARING");
    // Nothing after the flag's step ran: no cut asked for, a's divergent tail still there, still read-only.
    expect(cutsAsked).toBe(0);
    expect(batches(a)).toEqual(before);
    expect(await writable(t, a)).toBe(false);

    controller.setAvailable(true);
    const back = t.clock.now();
    await untilCaughtUp(t, a, "back caught up", "back");
    expect(t.clock.now() - back).toBeLessThanOrEqual(1_500);
    expect(seen).not.toContain("PREPARING->FAILED");
    expect(batches(a)).toEqual(batches(b));
  });
});

describe("deleting the mirror while STOPPED's step waits for the controller", () => {
  it("is refused until the flag is cleared: deleting never leaves the failed-over topic read-only for good", async () => {
    const { t, b } = await mirrored();
    await failOverLosingControllerAt(t, b, "STOPPED");
    await t.advance(5_000);
    expect((await onlyRowOf(b)).state).toBe("STOPPED");
    const refused = await deleteRefusal(t, b);
    expect(String(refused)).toMatch(/orders-0 \(STOPPED, its read-only flag not cleared yet/);
    expect(b.mirroring.coordinators.describe("dr")).toHaveLength(1);

    // The controller is back: a deletion asked for at once is refused while the step's retry is due, and
    // goes through once the step cleared the flag; either way the topic ends writable.
    b.cluster.controller.setAvailable(true);
    const deleted = async () => {
      const error = await deleteRefusal(t, b);
      if (error !== undefined) expect(String(error)).toMatch(/read-only flag not cleared yet/);
      return error === undefined;
    };
    await t.until(deleted, "dr deleted");
    expect(b.mirroring.coordinators.describe("dr")).toHaveLength(0);
    await t.advance(5_000);
    expect(await writable(t, b)).toBe(true);
  });
});

describe("deleting the mirror while STOPPED's step waits for the controller, its other topics at rest", () => {
  it("tombstones nothing until every partition is at rest: a refusal on one coordinator does not leave the mirror half deleted", async () => {
    const { t, b } = await mirrored("payments");
    const views = () => b.mirroring.coordinators.describe("dr");
    const names = () =>
      views()
        .map((v) => `${v.key.topic}-${v.key.partition}`)
        .sort();
    await t.run(b.mirroring.admin.removeTopics("dr", "payments"));
    await t.until(
      () => views().filter((v) => v.key.topic === "payments" && v.state === "STOPPED").length === 4,
      "payments STOPPED",
    );
    await t.advance(2_000);
    // payments has a partition on another coordinator (`__mirror_state` partition) than orders-0's.
    const coordinatorOf = (v: { key: MirrorPartitionKey }) => mirrorStatePartitionFor(v.key, 4);
    const orders = views().find((v) => v.key.topic === "orders")!;
    expect(
      views().some((v) => v.key.topic === "payments" && coordinatorOf(v) !== coordinatorOf(orders)),
    ).toBe(true);
    const all = names();
    expect(all).toHaveLength(5);

    await failOverLosingControllerAt(t, b, "STOPPED");
    await t.advance(5_000);
    const refused = await deleteRefusal(t, b);
    expect(String(refused)).toMatch(/orders-0 \(STOPPED, its read-only flag not cleared yet/);
    await t.advance(5_000);
    // No partition was tombstoned: payments' are all still there, on every coordinator.
    expect(names()).toEqual(all);

    b.cluster.controller.setAvailable(true);
    await t.advance(5_000);
    await t.run(b.mirroring.admin.deleteMirror("dr"));
    expect(views()).toHaveLength(0);
    expect(await writable(t, b)).toBe(true);
  });
});

describe("a removal while the failback's truncation waits for the controller", () => {
  it("the truncation is not asked again once the STOP overtook it: a's log is left as it was, and writable", async () => {
    const { t, a, seen } = await failedOverWithTailOnA();
    const before = batches(a);
    const controller = await failBackLosingControllerAtTruncation(t, a, seen);
    await t.advance(3_000);
    // The removal needs the controller (it changes `mirror.name`): it comes as the controller is back,
    // before the truncation's next try.
    controller.setAvailable(true);
    await t.run(a.mirroring.admin.removeTopics("back", "orders"));
    await t.until(async () => (await onlyRowOf(a, "back")).state === "STOPPED", "back STOPPED");
    await t.advance(5_000);
    expect(seen).toEqual(["UNKNOWN->PREPARING", "PREPARING->STOPPING", "STOPPING->STOPPED"]);
    expect(batches(a)).toEqual(before);
    expect(await writable(t, a)).toBe(true);
  });
});
