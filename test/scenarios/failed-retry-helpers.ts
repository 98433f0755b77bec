import { expect } from "vitest";
import { onlyRowOf, ordersOn, type Topology } from "./helpers";

/**
 * `orders` (3 records) on a, added to b's mirror `dr`, and every broker of a down as b asks a for the
 * partition's LME (PREPARING): its next step on the source (the source's log end) finds none running, and
 * the partition is FAILED.
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
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED preparing");
  expect(down).toBe(true);
  return { a, b, producer };
}
