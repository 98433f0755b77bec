import { describe, expect, it } from "vitest";
import { mirroredOrders, topology } from "./helpers";

type Topology = ReturnType<typeof topology>;

/** `orders` (1 partition, RF 3) on `origin` with `n` records from an idempotent producer, which is returned. */
async function ordersWith(t: Topology, origin: ReturnType<Topology["node"]>, n: number) {
  await t.run(
    origin.kafka
      .admin()
      .createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
  );
  await t.advance(200);
  const producer = origin.kafka.producer({ idempotent: true });
  await t.run(producer.connect());
  for (let i = 0; i < n; i++)
    await t.run(producer.send({ topic: "orders", messages: [{ key: `k${i}`, value: `v${i}` }], acks: -1 }));
  return producer;
}

/** Each `[to, from]` hop in turn: `to` mirrors `orders` from `from` (mirror `<from><to>`), caught up. */
async function chain(t: Topology, hops: readonly (readonly [string, string])[]) {
  for (const [to, from] of hops) {
    const node = t.node(to);
    await t.run(node.mirroring.admin.createMirror(`${from}${to}`, { "bootstrap.servers": `${from}:9092` }));
    await t.run(node.mirroring.admin.addTopics(`${from}${to}`, "orders"));
    await t.run(node.mirroring.whenCaughtUp(`${from}${to}`));
  }
}

const logEnd = (node: ReturnType<Topology["node"]>) =>
  node.cluster.leaderFor("orders", 0).replica("orders", 0)!.log.logEndOffset;

describe("mirror loops are refused at --add (issue 11 item 5)", () => {
  it("refuses adding, on A, a mirror of B's topic that B mirrors from A, and changes nothing", async () => {
    const { t, a, b } = await mirroredOrders();
    await t.run(b.mirroring.whenState("dr", "MIRRORING"));

    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    const before = a.cluster.controller.image.mirrors.get("back");
    await expect(t.run(a.mirroring.admin.addTopics("back", "orders"))).rejects.toMatchObject({
      errorName: "MIRROR_LOOP",
      retriable: false,
      topics: ["orders"],
      sourceMirror: "dr",
    });
    await t.advance(1_000);

    // Nothing changed on A: its topic is no mirror topic, takes writes, and the mirror's patterns are as before.
    expect(a.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBeUndefined();
    expect(a.cluster.controller.image.mirrors.get("back")).toEqual(before);
    expect(a.mirroring.coordinators.describe("back")).toEqual([]);
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    await t.run(producer.send({ topic: "orders", messages: [{ key: "k", value: "still writable" }] }));
  });

  it("accepts a chain A -> B -> C (the source mirrors the topic from a third cluster)", async () => {
    const t = topology(["a", "b", "c"]);
    const a = t.node("a");
    const b = t.node("b");
    const c = t.node("c");
    await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1 }] }));
    await t.advance(200);
    await t.run(b.mirroring.admin.createMirror("ab", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("ab", "orders"));
    await t.run(c.mirroring.admin.createMirror("bc", { "bootstrap.servers": "b:9092" }));
    const added = await t.run(c.mirroring.admin.addTopics("bc", "orders"));
    expect(added.topics).toEqual(["orders"]);
    await t.run(c.mirroring.whenState("bc", "MIRRORING"));
  });

  // Before, only a source mirroring the topic straight from here was refused: A accepted C's copy, its own
  // topic went read-only with every other copy round the loop, and PREPARING truncated it to C's copy (the
  // LME of C, which never failed over, is -1), dropping A's acknowledged records not yet round the loop.
  it("refuses closing a longer loop A -> B -> C -> A, keeping A's records and writes", async () => {
    const t = topology(["a", "b", "c"]);
    const a = t.node("a");
    const producer = await ordersWith(t, a, 5);
    await chain(t, [
      ["b", "a"],
      ["c", "b"],
    ]);
    // B stops copying for a while: A's next records have not gone round yet.
    await t.run(t.node("b").mirroring.admin.pauseTopics("ab", "orders"));
    await t.run(t.node("b").mirroring.whenState("ab", "PAUSED"));
    for (let i = 5; i < 8; i++)
      await t.run(producer.send({ topic: "orders", messages: [{ key: `k${i}`, value: `v${i}` }], acks: -1 }));

    await t.run(a.mirroring.admin.createMirror("ca", { "bootstrap.servers": "c:9092" }));
    const error = await t.run(a.mirroring.admin.addTopics("ca", "orders")).catch((e: unknown) => e);
    expect(error).toMatchObject({
      errorName: "MIRROR_LOOP",
      retriable: false,
      topics: ["orders"],
      sourceMirror: "bc",
    });
    expect((error as Error).message).toContain(
      `from cluster ${t.node("b").cluster.clusterId}, whose copy comes from this cluster (${a.cluster.clusterId})`,
    );
    await t.advance(5_000);
    expect(a.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBeUndefined();
    expect(a.mirroring.coordinators.describe("ca")).toEqual([]);
    expect(logEnd(a)).toBe(8n);
    await t.run(producer.send({ topic: "orders", messages: [{ key: "k8", value: "still writable" }] }));
  });

  it("refuses a loop of four clusters", async () => {
    const t = topology(["a", "b", "c", "d"]);
    const a = t.node("a");
    await ordersWith(t, a, 3);
    await chain(t, [
      ["b", "a"],
      ["c", "b"],
      ["d", "c"],
    ]);
    await t.run(a.mirroring.admin.createMirror("da", { "bootstrap.servers": "d:9092" }));
    const error = await t.run(a.mirroring.admin.addTopics("da", "orders")).catch((e: unknown) => e);
    expect(error).toMatchObject({ errorName: "MIRROR_LOOP", sourceMirror: "cd" });
    const [b, c] = [t.node("b").cluster.clusterId, t.node("c").cluster.clusterId];
    expect((error as Error).message).toContain(
      `from cluster ${c}, whose copy comes through ${b} from this cluster (${a.cluster.clusterId})`,
    );
    expect(logEnd(a)).toBe(3n);
  });

  it("accepts a failback from the end of a chain whose writer is elsewhere (A -> B failed over, B -> C, C -> A)", async () => {
    const t = topology(["a", "b", "c"]);
    const a = t.node("a");
    const b = t.node("b");
    await ordersWith(t, a, 3);
    await chain(t, [["b", "a"]]);
    await t.run(b.mirroring.admin.removeTopics("ab", "orders"));
    await t.run(b.mirroring.whenState("ab", "STOPPED"));
    await chain(t, [
      ["c", "b"],
      ["a", "c"],
    ]);
    expect(a.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("ca");
  });
});
