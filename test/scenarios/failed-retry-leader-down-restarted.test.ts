import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import {
  LONG_RETRY_BACKOFF,
  onlyRowOf,
  ordersBatches,
  ordersOn,
  type Topology,
  topology,
  untilCaughtUp,
} from "./helpers";

/**
 * `orders` mirrored to b (4 brokers, seed 2: orders-0's leader is no replica of its `__mirror_state`
 * partition), its other replicas down so that its leader is its last in-sync replica, the source lost, and
 * b failing over: the leader crashes as the failover's PID reset waits for its in-sync replicas, with no
 * controller to fence it. The step after finds the broker the metadata names leader not running, and the
 * partition is FAILED. Returns the source's batches, the crashed leader and b's lifecycle changes.
 */
async function lastInSyncLeaderDownInFailover(t: Topology) {
  const [a, b] = [t.node("a"), t.node("b")];
  await ordersOn(t, a, 3);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await untilCaughtUp(t, b, "dr caught up");
  const controller = b.cluster.controller;
  const { leader, replicas } = controller.image.partition("orders", 0)!;
  const [view] = b.mirroring.coordinators.describe("dr");
  const statePartition = mirrorStatePartitionFor(view!.key, 4);
  expect(controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!.replicas).not.toContain(leader);
  for (const id of replicas) if (id !== leader) b.cluster.crashBroker(id);
  await t.advance(1_000);
  expect(controller.image.partition("orders", 0)!.isr).toEqual([leader]);

  const mirroredBatches = ordersBatches(a);
  for (const id of a.cluster.runningBrokers()) a.cluster.crashBroker(id);
  const broker = b.cluster.localBroker(leader)!;
  const awaitReplicated = broker.awaitReplicated.bind(broker);
  let crashed = false;
  broker.awaitReplicated = (topic, partition, offset, timeoutMs) => {
    const replicated = awaitReplicated(topic, partition, offset, timeoutMs);
    if (topic === "orders" && !crashed) {
      crashed = true;
      queueMicrotask(() => {
        controller.setAvailable(false);
        b.cluster.crashBroker(leader);
      });
    }
    return replicated;
  };
  const seen: string[] = [];
  b.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED with its leader down");
  expect((await onlyRowOf(b)).errorMessage).toMatch(
    /orders-0 has no running leader on the destination \(leader/,
  );
  expect(controller.image.partition("orders", 0)!.leader).toBe(leader);
  return { b, mirroredBatches, leader, seen };
}

describe("a FAILED partition whose step found its destination leader down, that leader restarting with no controller", () => {
  // The same broker back at the same epoch is no new leader, as for a step that leader refused itself
  // (`leaderChangedSince`): the failover's retry needs the controller (its leader epoch bump first), waited
  // for it in place for 60 s and failed again on NOT_CONTROLLER, which nothing brings forward: the partition
  // then waited its whole backoff (an hour here) after the controller was back. The controller's return
  // fences the restarted broker and elects it again, at a newer epoch: that retries it at once.
  it("the failover waits for the controller's return, not its backoff, its budget kept", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF, brokers: 4, seed: 2 });
    const { b, mirroredBatches, leader, seen } = await lastInSyncLeaderDownInFailover(t);
    const controller = b.cluster.controller;
    const failed = [...seen];
    b.cluster.startBroker(leader);
    await t.advance(90_000);
    expect(seen).toEqual(failed);
    expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: 0 });

    controller.setAvailable(true);
    const back = t.clock.now();
    expect(controller.image.partition("orders", 0)).toMatchObject({ leader, isr: [leader] });
    await t.until(
      async () => (await onlyRowOf(b)).state === "STOPPED",
      "STOPPED once the controller is back",
    );
    expect(t.clock.now() - back).toBeLessThan(1_000);
    expect(ordersBatches(b).slice(0, -1)).toEqual(mirroredBatches);
    expect(controller.image.partition("orders", 0)!.mirrorReadOnly).toBe(false);
  });
});
