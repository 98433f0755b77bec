import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { failedPreparingSourceDown } from "./failed-retry-helpers";
import {
  LONG_RETRY_BACKOFF,
  leaderBatches,
  type Node,
  onlyRowOf,
  ordersBatches,
  ordersOn,
  type Topology,
  topology,
  untilCaughtUp,
} from "./helpers";

/** `orders` (1 partition) on a with 3 records, mirrored to b by `dr` until caught up. */
async function mirrored(t: Topology, configs: Record<string, string> = {}) {
  const [a, b] = [t.node("a"), t.node("b")];
  const producer = await ordersOn(t, a, 3);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092", ...configs }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await untilCaughtUp(t, b, "dr caught up");
  return { a, b, producer };
}

/**
 * A rolling restart of b: the leader of `orders-0` moves away and back four times. Returns b's lifecycle
 * changes meanwhile, as `from->to`.
 */
async function rollingRestartOf(t: Topology, b: Node): Promise<string[]> {
  const seen: string[] = [];
  const off = b.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
  for (let i = 0; i < 4; i++) {
    const leader = b.cluster.controller.image.partition("orders", 0)!.leader;
    b.cluster.crashBroker(leader);
    await t.advance(2_000);
    b.cluster.startBroker(leader);
    await t.advance(2_000);
  }
  off();
  return seen;
}

/**
 * A partition FAILED on a retriable error waits out its backoff (full jitter, growing to 5 minutes), but
 * not once the fault it waits out is over: its destination leader back, or its source answering again.
 */
describe("a FAILED partition retries as soon as its fault ends, not when its backoff does", () => {
  it("the partition's destination leader comes back: the failover it failed in goes on at once", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    // One replica on b: its broker down leaves the partition with no leader.
    const { a, b } = await mirrored(t, { "default.replication.factor": "1" });
    const [replica] = b.cluster.controller.image.partition("orders", 0)!.replicas;
    b.cluster.crashBroker(replica!);
    expect(b.cluster.controller.image.partition("orders", 0)!.leader).toBe(-1);
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED with no leader");
    expect((await onlyRowOf(b)).errorMessage).toMatch(/leader/);
    await t.advance(30_000);
    expect((await onlyRowOf(b)).state).toBe("FAILED");

    b.cluster.startBroker(replica!);
    const back = t.clock.now();
    await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "STOPPED once the leader is back");
    expect(t.clock.now() - back).toBeLessThan(1_000);
    // The failover's barrier, last, over the source's batches at their offsets.
    const onB = leaderBatches(b.cluster, "orders", 0);
    expect(onB.at(-1)!.batch.isControl && controlTypeOf(onB.at(-1)!.batch)).toBe(
      ControlRecordType.MIRROR_PID_RESET,
    );
    expect(ordersBatches(b).slice(0, -1)).toEqual(ordersBatches(a));
    expect(b.cluster.controller.image.partition("orders", 0)!.mirrorReadOnly).toBe(false);
  });

  it("the source answers again: a partition that failed preparing retries at the next metadata refresh", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, b, producer } = await failedPreparingSourceDown(t);
    // Retriable: a source down is a lost connection, which retries (not FAILED for good).
    expect(await onlyRowOf(b)).toMatchObject({
      retryAttempt: 0,
      errorMessage: expect.stringMatching(/no running broker/),
    });
    // Longer than the metadata refresh interval (30 s): a refresh found the source down.
    await t.advance(45_000);
    expect((await onlyRowOf(b)).state).toBe("FAILED");

    for (const id of [0, 1, 2]) a.cluster.startBroker(id);
    const back = t.clock.now();
    await untilCaughtUp(t, b, "dr caught up once a is back");
    // The next refresh (within its 30 s interval) found the source back.
    expect(t.clock.now() - back).toBeLessThan(31_000);
    await t.run(producer.send({ topic: "orders", messages: [{ value: "after" }], acks: -1 }));
    await untilCaughtUp(t, b, "dr caught up with the new record");
    expect(ordersBatches(b)).toEqual(ordersBatches(a));
    expect(ordersBatches(b)).toHaveLength(4);
  });

  it("its destination leader moves while its source is down: no retry, its budget kept for the source's return", async () => {
    const t = topology(["a", "b"], { retry: { ...LONG_RETRY_BACKOFF, maxAttempts: 3 } });
    const { a, b } = await failedPreparingSourceDown(t);
    // None of that ends what the partition waits for; retried at each move, it used up its 3 attempts
    // (FAILED for good, until an operator recovered it), with two records per move.
    expect(await rollingRestartOf(t, b)).toEqual([]);
    expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: 0 });
    // The source back (after a refresh found it down), the next refresh retries it.
    await t.advance(30_000);
    for (const id of [0, 1, 2]) a.cluster.startBroker(id);
    await untilCaughtUp(t, b, "dr caught up once a is back");
    expect(ordersBatches(b)).toEqual(ordersBatches(a));
  });

  it("its source partition has no leader (LEADER_NOT_AVAILABLE from the source): a destination election retries nothing", async () => {
    const t = topology(["a", "b"], { retry: { ...LONG_RETRY_BACKOFF, maxAttempts: 3 } });
    const [a, b] = [t.node("a"), t.node("b")];
    await t.run(
      a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 1 }] }),
    );
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    // The one replica of orders-0 on a is down: PREPARING's step on the source finds no leader there.
    a.cluster.crashBroker(a.cluster.controller.image.partition("orders", 0)!.replicas[0]!);
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED preparing");
    expect((await onlyRowOf(b)).errorMessage).toMatch(/no running leader/);
    expect(await rollingRestartOf(t, b)).toEqual([]);
    expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: 0 });
  });
});

describe("a FAILED partition whose leader crashed while the destination's controller was away", () => {
  it("the controller back elects a running leader: the resume it failed in goes on at once", async () => {
    // Seed 2 and 4 brokers: orders-0's leader is no replica of its `__mirror_state` partition, whose
    // writes (the FAILED record) go on while that broker is down and no controller shrinks an ISR.
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF, brokers: 4, seed: 2 });
    const { a, b, producer } = await mirrored(t);
    const controller = b.cluster.controller;
    const leader = leaderOffItsStatePartition(b);
    await t.run(b.mirroring.admin.pauseTopics("dr", "orders"));
    await t.until(async () => (await onlyRowOf(b)).state === "PAUSED", "PAUSED");
    // As MIRRORING begins again (its fetcher not added yet), the controller goes away and the leader
    // crashes: the metadata image still names the crashed broker leader (no controller fences it).
    const off = b.mirroring.subscribeTransitions((x) => {
      if (x.record.state !== "MIRRORING") return;
      controller.setAvailable(false);
      b.cluster.crashBroker(leader);
    });
    await t.run(b.mirroring.admin.resumeTopics("dr", "orders"));
    await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED with its leader down");
    off();
    expect(controller.image.partition("orders", 0)!.leader).toBe(leader);
    // LEADER_NOT_AVAILABLE, as for no leader at all: what the election ends.
    expect((await onlyRowOf(b)).errorMessage).toMatch(/orders-0 has no running leader on the destination/);
    await t.advance(30_000);
    expect((await onlyRowOf(b)).state).toBe("FAILED");

    // The controller back fences the crashed broker and elects another replica.
    controller.setAvailable(true);
    const back = t.clock.now();
    expect(controller.image.partition("orders", 0)!.leader).not.toBe(leader);
    await untilCaughtUp(t, b, "dr caught up once a leader is elected");
    expect(t.clock.now() - back).toBeLessThan(1_000);
    await t.run(producer.send({ topic: "orders", messages: [{ value: "after" }], acks: -1 }));
    await untilCaughtUp(t, b, "dr caught up with the new record");
    expect(ordersBatches(b)).toEqual(ordersBatches(a));
  });
});

/**
 * orders-0's leader on b, checked to be no replica of the `__mirror_state` partition of its mirror
 * partition (4 state partitions), whose writes then go on while that broker is down.
 */
function leaderOffItsStatePartition(b: Node): number {
  const controller = b.cluster.controller;
  const leader = controller.image.partition("orders", 0)!.leader;
  const [view] = b.mirroring.coordinators.describe("dr");
  const statePartition = controller.image.partition(
    MIRROR_STATE_TOPIC,
    mirrorStatePartitionFor(view!.key, 4),
  );
  expect(statePartition!.replicas).not.toContain(leader);
  return leader;
}

/**
 * `orders` mirrored to b (4 brokers, seed 2: orders-0's leader is no replica of its `__mirror_state`
 * partition, so its coordinator lives on), the source lost (no metadata refresh answers, so none sends the
 * removal again), and b failing over: STOPPING's PID reset is appended on orders-0's leader, which crashes
 * while the step waits for its in-sync replicas (the wait ends NOT_LEADER_OR_FOLLOWER). `atCrash` runs
 * just before the crash. Returns the source's batches and the crashed leader.
 */
async function leaderCrashedInFailover(t: Topology, atCrash: () => void = () => {}) {
  const { a, b } = await mirrored(t);
  const leader = leaderOffItsStatePartition(b);
  const mirroredBatches = ordersBatches(a);
  for (const id of a.cluster.runningBrokers()) a.cluster.crashBroker(id);
  const broker = b.cluster.localBroker(leader)!;
  const awaitReplicated = broker.awaitReplicated.bind(broker);
  let crashed = false;
  let down = false;
  broker.awaitReplicated = (topic, partition, offset, timeoutMs) => {
    const replicated = awaitReplicated(topic, partition, offset, timeoutMs);
    if (topic === "orders" && !crashed) {
      crashed = true;
      queueMicrotask(() => {
        atCrash();
        b.cluster.crashBroker(leader);
        down = true;
      });
    }
    return replicated;
  };
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.until(() => down, "leader crashed");
  return { b, mirroredBatches, leader };
}

/** b's orders-0 ends with the failover's barrier over the source's batches, and is writable. */
function failedOver(b: Node, mirroredBatches: string[]) {
  const onB = leaderBatches(b.cluster, "orders", 0);
  expect(onB.at(-1)!.batch.isControl && controlTypeOf(onB.at(-1)!.batch)).toBe(
    ControlRecordType.MIRROR_PID_RESET,
  );
  expect(ordersBatches(b).slice(0, -1)).toEqual(mirroredBatches);
  expect(b.cluster.controller.image.partition("orders", 0)!.mirrorReadOnly).toBe(false);
}

/**
 * b's controller, away while the failover's leader was down, comes back: it elects another leader of
 * orders-0, and the FAILED failover retries at once (within a second) and completes on it.
 */
async function controllerBackElectsAndFailsOver(
  t: Topology,
  b: Node,
  leader: number,
  mirroredBatches: string[],
) {
  const controller = b.cluster.controller;
  controller.setAvailable(true);
  const back = t.clock.now();
  expect(controller.image.partition("orders", 0)!.leader).not.toBe(leader);
  await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "STOPPED on the new leader");
  expect(t.clock.now() - back).toBeLessThan(1_000);
  failedOver(b, mirroredBatches);
}

describe("a FAILED partition whose destination leader crashed in the middle of its step", () => {
  it("an unplanned failover's barrier waits for its replicas as the leader crashes: the election retries it at once", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF, brokers: 4, seed: 2 });
    const { b, mirroredBatches, leader } = await leaderCrashedInFailover(t);
    // The controller elected another replica as the leader crashed, before the step's failure was recorded.
    const elected = t.clock.now();
    expect(b.cluster.controller.image.partition("orders", 0)!.leader).not.toBe(leader);
    // The step runs again on the new leader at once: not up to an hour later, at the backoff's end.
    await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "STOPPED on the new leader");
    expect(t.clock.now() - elected).toBeLessThan(1_000);
    failedOver(b, mirroredBatches);
  });

  it("the leader crashes while the controller is away: the step is retried once the controller is back and elects another", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF, brokers: 4, seed: 2 });
    const { b, mirroredBatches, leader } = await leaderCrashedInFailover(t, () =>
      t.node("b").cluster.controller.setAvailable(false),
    );
    const controller = b.cluster.controller;
    await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED with its leader down");
    expect((await onlyRowOf(b)).errorMessage).toMatch(/stopped leading orders-0/);
    await t.advance(30_000);
    expect((await onlyRowOf(b)).state).toBe("FAILED");
    expect(controller.image.partition("orders", 0)!.leader).toBe(leader);

    await controllerBackElectsAndFailsOver(t, b, leader, mirroredBatches);
  });
});

describe("a FAILED partition whose destination leader crashed in the middle of its step and restarts, no controller running", () => {
  // The same leader back at the same epoch (no controller fences it or elects another) is no new leader: the
  // step it failed in (the failover's leader epoch bump first) needs the controller, waits for it in place
  // for 60 s, and fails again on NOT_CONTROLLER, which nothing brings forward. The controller's return fences
  // the restarted broker and elects another leader, at a newer epoch: that retries it at once.
  for (const restart of ["before", "after"] as const) {
    it(`the leader restarts ${restart} the FAILED is recorded: the failover waits for the controller's return, not its backoff`, async () => {
      const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF, brokers: 4, seed: 2 });
      const seen: string[] = [];
      const restartBroker = (id: number) => {
        t.node("b").cluster.startBroker(id);
        seen.push("leader restarted");
      };
      const { b, mirroredBatches, leader } = await leaderCrashedInFailover(t, () => {
        const b = t.node("b");
        b.cluster.controller.setAvailable(false);
        b.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
        // Before: on the scheduler's next turn, once the step's failure was reported, before its FAILED
        // record is written.
        const crashing = b.cluster.controller.image.partition("orders", 0)!.leader;
        if (restart === "before") t.scheduler.schedule(() => restartBroker(crashing), 0);
      });
      if (restart === "after") {
        await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED");
        restartBroker(leader);
      }
      const expected =
        restart === "before"
          ? ["leader restarted", "STOPPING->FAILED"]
          : ["STOPPING->FAILED", "leader restarted"];
      await t.until(() => seen.length === 2, "the restart and the FAILED");
      expect(seen).toEqual(expected);
      const controller = b.cluster.controller;
      expect(controller.image.partition("orders", 0)!.leader).toBe(leader);
      expect(b.cluster.runningBrokers()).toContain(leader);

      // A controller away longer than a step waits for it in place: the FAILED waits, its budget kept.
      await t.advance(90_000);
      expect(seen).toEqual(expected);
      expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: 0 });

      await controllerBackElectsAndFailsOver(t, b, leader, mirroredBatches);
    });
  }
});
