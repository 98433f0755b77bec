import { describe, expect, it } from "vitest";
import { leaderBatches, topology } from "./helpers";

type Topology = ReturnType<typeof topology>;
type Node = ReturnType<Topology["node"]>;

async function produce(t: Topology, a: Node, from: number, to: number, tag: string): Promise<void> {
  const producer = a.kafka.producer({ idempotent: true });
  await t.run(producer.connect());
  for (let i = from; i < to; i++)
    await t.run(
      producer.send({ topic: "orders", messages: [{ key: `k${i}`, value: `${tag}${i}` }], acks: -1 }),
    );
  await t.run(producer.disconnect());
}

/** `orders` (1 partition, RF 3) on `a` with 5 records, and `b`'s mirror `dr` of it (added, not awaited). */
async function mirrorOld(t: Topology, a: Node, b: Node) {
  const admin = a.kafka.admin();
  const create = () =>
    t.run(admin.createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }));
  await create();
  await produce(t, a, 0, 5, "old");
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  return { admin, create };
}

/** Every batch of `orders-0` on the node's leader, as `offset:hex`. */
const hexes = (node: Node) => leaderBatches(node.cluster, "orders", 0).map((b) => `${b.offset}:${b.hex}`);

describe("Critical: a source topic deleted and created again is never mixed into the mirror of the old one", () => {
  it("the new topic's records (same name, another topic id) never reach the destination; the partition fails", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    const { admin, create } = await mirrorOld(t, a, b);
    await t.until(async () => {
      const [row] = await b.mirroring.admin.describe("dr");
      return row?.state === "MIRRORING" && row.lag === 0n;
    }, "dr caught up");
    const mirrored = hexes(b);
    expect(mirrored).toHaveLength(5);
    const oldId = a.cluster.controller.image.topic("orders")!.topicId;

    // On the source, `orders` is deleted and created again at once, and gets more records than the old
    // one had: a fetch by name at offset 5 would find the new topic's records there.
    await t.run(admin.deleteTopics({ topics: ["orders"] }));
    await create();
    expect(a.cluster.controller.image.topic("orders")!.topicId).not.toBe(oldId);
    await produce(t, a, 0, 20, "new");

    // Checked on every step until the partition fails: the destination holds exactly what it mirrored.
    await t.until(async () => {
      expect(hexes(b)).toEqual(mirrored);
      const [row] = await b.mirroring.admin.describe("dr");
      return row?.state === "FAILED";
    }, "dr FAILED");
    expect(hexes(b)).toEqual(mirrored);
    const [failed] = await b.mirroring.admin.describe("dr");
    expect(failed?.errorMessage).toMatch(/UNKNOWN_TOPIC_ID|topic id/);
    // Already while it may still retry, nothing is measured against the new topic (its end is 20).
    expect(failed?.lag).toBeNull();
    expect(failed?.sourceOffset).not.toBe(20n);
    // Retries and the metadata refreshes that follow never copy the new topic either.
    const end = t.clock.now() + 120_000;
    await t.until(() => {
      expect(hexes(b)).toEqual(mirrored);
      return t.clock.now() >= end;
    }, "two minutes later");
    const [row] = await b.mirroring.admin.describe("dr");
    expect(row?.state).toBe("FAILED");
    expect(row?.retryAttempt).toBe(-1); // for good: the metadata refreshes found the topic recreated
    // Its describe row measures nothing against the new topic: no source offset, no lag.
    expect(row).toMatchObject({ sourceOffset: null, destinationOffset: 5n, lag: null });
  });

  it("a source topic deleted while mirrored fails for good at once, not after retries until the next refresh", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    const { admin } = await mirrorOld(t, a, b);
    await t.until(async () => {
      const [row] = await b.mirroring.admin.describe("dr");
      return row?.state === "MIRRORING" && row.lag === 0n;
    }, "dr caught up");
    const deletedAt = t.clock.now();
    await t.run(admin.deleteTopics({ topics: ["orders"] }));
    const states: string[] = [];
    await t.until(async () => {
      const [row] = await b.mirroring.admin.describe("dr");
      if (row && states.at(-1) !== row.state) states.push(row.state);
      return row?.state === "FAILED" && row.retryAttempt === -1;
    }, "dr FAILED for good");
    // The fetcher's UNKNOWN_TOPIC_ID starts a metadata refresh on the broker that syncs the mirror, and
    // two refreshes that find the topic gone fail it for good: about a virtual second, one retry, instead
    // of retries (FAILED, MIRRORING, FAILED, ...) until the refresh intervals found it (60 s here).
    expect(t.clock.now() - deletedAt).toBeLessThan(10_000);
    const afterFirstFailure = states.slice(states.indexOf("FAILED"));
    expect(afterFirstFailure.filter((s) => s === "MIRRORING").length).toBeLessThanOrEqual(1);
    const [row] = await b.mirroring.admin.describe("dr");
    expect(row?.errorMessage).toBe("The source topic is deleted.");
  });

  it("a re-add whose source topic is recreated while PREPARING looks up its LME truncates nothing by the new topic", async () => {
    let held: Promise<void> = Promise.resolve();
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    // a's LME lookups wait for `held`: the window in which the source topic is replaced.
    const served = a.mirroring.asSource();
    t.registry.unregister("a:9092");
    t.registry.register("a:9092", a.cluster, {
      ...served,
      lastMirrorEpoch: async (topicId, partition) => {
        await held;
        return served.lastMirrorEpoch!(topicId, partition);
      },
    });
    const { admin, create } = await mirrorOld(t, a, b);
    await t.run(b.mirroring.whenCaughtUp("dr"));
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    const kept = hexes(b); // the 5 mirrored batches and the failover's markers: b holds the only copy soon

    let release = () => {};
    held = new Promise((resolve) => {
      release = resolve;
    });
    await t.run(b.mirroring.admin.addTopics("dr", "orders", { truncateLocalWrites: true }));
    await t.run(admin.deleteTopics({ topics: ["orders"] }));
    await create();
    await produce(t, a, 0, 1, "new");
    release();
    const end = t.clock.now() + 120_000;
    await t.until(() => {
      // Truncating to the LME may only drop what b wrote after the failover (its markers), never a
      // mirrored batch, whatever the new topic's offsets say.
      expect(hexes(b).slice(0, 5)).toEqual(kept.slice(0, 5));
      return t.clock.now() >= end;
    }, "two minutes later");
    const [row] = await b.mirroring.admin.describe("dr");
    expect(row).toMatchObject({ state: "FAILED", retryAttempt: -1 });
  });
});
