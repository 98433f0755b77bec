import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { expect } from "vitest";
import {
  type Node,
  onlyRowOf,
  ordersBatches,
  ordersOn,
  type Topology,
  transitionsOf,
  untilCaughtUp,
} from "./helpers";

/** The broker that coordinates `mirror`'s orders-0 on `node`: the leader of its `__mirror_state` partition. */
export function coordinatorOf(node: Node, mirror: string): number {
  const topicId = node.cluster.controller.image.topic("orders")!.topicId;
  const statePartition = mirrorStatePartitionFor({ mirror, topicId, partition: 0 }, 4);
  return node.cluster.controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!.leader;
}

/**
 * `orders` (3 records) on a, added to b's mirror `dr`, and every broker of a down as b asks a for the
 * partition's LME (PREPARING): its next step on the source (the source's log end) finds none running, and
 * the partition is FAILED. `created`: when `dr` was created (each broker of b refreshes it every 30 s
 * from then).
 */
export async function failedPreparingSourceDown(t: Topology) {
  const [a, b] = [t.node("a"), t.node("b")];
  const producer = await ordersOn(t, a, 3);
  const asSource = a.mirroring.asSource();
  let down = false;
  t.registry.register("a:9092", a.cluster, {
    ...asSource,
    lastMirrorEpoch: (topicId, partition) => {
      if (!down) {
        down = true;
        for (const id of a.cluster.runningBrokers()) a.cluster.crashBroker(id);
      }
      return asSource.lastMirrorEpoch!(topicId, partition);
    },
  });
  const created = t.clock.now();
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED preparing");
  expect(down).toBe(true);
  return { a, b, producer, created };
}

/**
 * `orders` (3 records; on the broker `onBroker` alone when given, else on 3) mirrored to b by `dr`, failed
 * over to b (STOPPED), and a wrote on (a divergent tail): where a failback by `back` starts.
 */
export async function failedOverWithDivergentTail(t: Topology, onBroker?: number) {
  const [a, b] = [t.node("a"), t.node("b")];
  if (onBroker === undefined) await ordersOn(t, a, 3);
  else {
    const replicaAssignment = [{ partition: 0, replicas: [onBroker] }];
    await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", replicaAssignment }] }));
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    for (let i = 0; i < 3; i++)
      await t.run(producer.send({ topic: "orders", messages: [{ value: `v${i}` }] }));
  }
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await untilCaughtUp(t, b, "dr caught up");
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "dr STOPPED");
  const producer = a.kafka.producer();
  await t.run(producer.connect());
  await t.run(producer.send({ topic: "orders", messages: [{ value: "divergent on a" }], acks: -1 }));
  return { a, b };
}

/** Starts the failback of `orders` to a by `back`; returns a's lifecycle changes of `back` from then on. */
export async function failback(t: Topology, a: Node): Promise<string[]> {
  const seen = transitionsOf(a, "back");
  await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
  await t.run(a.mirroring.admin.addTopics("back", "orders"));
  return seen;
}

/** The failback, through one retry: MIRRORING with the divergent tail cut, a is b's copy batch for batch. */
export function expectOneRetryThenCopy(seen: readonly string[], a: Node, b: Node): void {
  expect(seen.slice(0, 4)).toEqual([
    "UNKNOWN->PREPARING",
    "PREPARING->FAILED",
    "FAILED->PREPARING",
    "PREPARING->MIRRORING",
  ]);
  expect(ordersBatches(a)).toEqual(ordersBatches(b));
}
