import { describe, expect, it } from "vitest";
import { leaderBatches, topology } from "./helpers";

type Topology = ReturnType<typeof topology>;
type Node = ReturnType<Topology["node"]>;

async function rowOf(node: Node) {
  const [row] = await node.mirroring.admin.describe("dr");
  if (row === undefined) throw new Error("no partition in mirror dr");
  return row;
}

const caughtUp = (t: Topology, b: Node, what: string) =>
  t.until(async () => {
    const row = await rowOf(b);
    return row.state === "MIRRORING" && row.lag === 0n;
  }, what);

/**
 * Every disk of b full for 20 s while a writes one more record: b's copy fails its append, and its FAILED
 * record commits once space is freed (`__mirror_state` is on those disks too).
 */
async function fullDiskIncident(t: Topology, b: Node, write: () => Promise<unknown>) {
  const brokers = b.cluster.runningBrokers();
  for (const id of brokers) b.cluster.setDiskFull(id, true);
  await t.run(write());
  await t.advance(20_000);
  for (const id of brokers) b.cluster.setDiskFull(id, false);
}

describe("FAILED retry budget: separate incidents do not add up", () => {
  it("a failure after the partition mirrored again starts the count over; the retries of one incident still run out", async () => {
    // One retry per incident: with counts adding up, the second incident would leave the partition FAILED
    // for good ("gave up after 1 retries") though the first had long been over.
    const t = topology(["a", "b"], { retry: { baseMs: 100, capMs: 200, maxAttempts: 1 } });
    const [a, b] = [t.node("a"), t.node("b")];
    await t.run(
      a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
    );
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    let n = 0;
    const write = () => producer.send({ topic: "orders", messages: [{ value: `v${n++}` }], acks: -1 });
    await t.run(write());
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await caughtUp(t, b, "caught up");

    for (let incident = 1; incident <= 3; incident++) {
      await fullDiskIncident(t, b, write);
      await caughtUp(t, b, `caught up after incident ${incident}`);
      // The retry that got it mirroring counted one attempt; it mirrors on.
      expect((await rowOf(b)).retryAttempt).toBe(1);
      await t.run(write());
      await caughtUp(t, b, `mirrored more after incident ${incident}`);
    }
    expect((await rowOf(b)).state).toBe("MIRRORING");
    const hex = (node: Node) => leaderBatches(node.cluster, "orders", 0).map((x) => `${x.offset}:${x.hex}`);
    expect(hex(b)).toEqual(hex(a));
    expect(hex(b)).toHaveLength(n);
  });

  it("a failure on a new leader of the copy, after the old leader mirrored again, starts the count over too", async () => {
    const t = topology(["a", "b"], { retry: { baseMs: 100, capMs: 200, maxAttempts: 1 } });
    const [a, b] = [t.node("a"), t.node("b")];
    await t.run(
      a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
    );
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    let n = 0;
    const write = () => producer.send({ topic: "orders", messages: [{ value: `v${n++}` }], acks: -1 });
    await t.run(write());
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await caughtUp(t, b, "caught up");

    // Incident 1, over: the retry got it mirroring, and its leader mirrored more since.
    await fullDiskIncident(t, b, write);
    await caughtUp(t, b, "caught up after incident 1");
    await t.run(write());
    await caughtUp(t, b, "mirrored more after incident 1");
    expect((await rowOf(b)).retryAttempt).toBe(1);

    // The copy's leader moves (its broker stops): the new leader fetches on, with nothing new to append.
    const oldLeader = b.cluster.leaderFor("orders", 0).brokerId;
    b.cluster.stopBroker(oldLeader);
    await t.until(() => {
      const leader = b.cluster.controller.image.partition("orders", 0)?.leader;
      return leader !== undefined && leader >= 0 && leader !== oldLeader;
    }, "a new leader of b's orders-0");
    await caughtUp(t, b, "caught up on the new leader");

    // Incident 2 hits the new leader before it appended anything: a new incident all the same, with its
    // own retry, not "gave up after 1 retries" because of incident 1's.
    await fullDiskIncident(t, b, write);
    await caughtUp(t, b, "caught up after incident 2");
    expect(await rowOf(b)).toMatchObject({ state: "MIRRORING", retryAttempt: 1, errorMessage: null });
    const hex = (node: Node) => leaderBatches(node.cluster, "orders", 0).map((x) => `${x.offset}:${x.hex}`);
    expect(hex(b)).toEqual(hex(a));
    expect(hex(b)).toHaveLength(n);
  });
});
