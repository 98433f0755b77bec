import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { expect } from "vitest";
import { type Node, onlyRowOf, ordersOn, type Topology } from "./helpers";

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
