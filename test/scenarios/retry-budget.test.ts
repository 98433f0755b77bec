import { describe, expect, it } from "vitest";
import { leaderBatches, onlyRowOf, topology, untilCaughtUp } from "./helpers";

type Topology = ReturnType<typeof topology>;
type Node = ReturnType<Topology["node"]>;

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

/**
 * `orders` on a (one partition, RF 3) with one record, mirrored to b by `dr` until caught up; b's mirror
 * retries a FAILED partition once (100-200 ms later). `write` sends one more record; `written()` counts them.
 */
async function mirroredWithOneRetry() {
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
  await untilCaughtUp(t, b, "caught up");
  return { t, a, b, write, written: () => n };
}

describe("FAILED retry budget: separate incidents do not add up", () => {
  it("a failure after the partition mirrored again starts the count over; the retries of one incident still run out", async () => {
    // One retry per incident: with counts adding up, the second incident would leave the partition FAILED
    // for good ("gave up after 1 retries") though the first had long been over.
    const { t, a, b, write, written } = await mirroredWithOneRetry();

    for (let incident = 1; incident <= 3; incident++) {
      await fullDiskIncident(t, b, write);
      await untilCaughtUp(t, b, `caught up after incident ${incident}`);
      // The retry that got it mirroring counted one attempt; it mirrors on.
      expect((await onlyRowOf(b)).retryAttempt).toBe(1);
      await t.run(write());
      await untilCaughtUp(t, b, `mirrored more after incident ${incident}`);
    }
    expect((await onlyRowOf(b)).state).toBe("MIRRORING");
    const hex = (node: Node) => leaderBatches(node.cluster, "orders", 0).map((x) => `${x.offset}:${x.hex}`);
    expect(hex(b)).toEqual(hex(a));
    expect(hex(b)).toHaveLength(written());
  });

  it("a failure on a new leader of the copy, after the old leader mirrored again, starts the count over too", async () => {
    const { t, a, b, write, written } = await mirroredWithOneRetry();

    // Incident 1, over: the retry got it mirroring, and its leader mirrored more since.
    await fullDiskIncident(t, b, write);
    await untilCaughtUp(t, b, "caught up after incident 1");
    await t.run(write());
    await untilCaughtUp(t, b, "mirrored more after incident 1");
    expect((await onlyRowOf(b)).retryAttempt).toBe(1);

    // The copy's leader moves (its broker stops): the new leader fetches on, with nothing new to append.
    const oldLeader = b.cluster.leaderFor("orders", 0).brokerId;
    b.cluster.stopBroker(oldLeader);
    await t.until(() => {
      const leader = b.cluster.controller.image.partition("orders", 0)?.leader;
      return leader !== undefined && leader >= 0 && leader !== oldLeader;
    }, "a new leader of b's orders-0");
    await untilCaughtUp(t, b, "caught up on the new leader");

    // Incident 2 hits the new leader before it appended anything: a new incident all the same, with its
    // own retry, not "gave up after 1 retries" because of incident 1's.
    await fullDiskIncident(t, b, write);
    await untilCaughtUp(t, b, "caught up after incident 2");
    expect(await onlyRowOf(b)).toMatchObject({ state: "MIRRORING", retryAttempt: 1, errorMessage: null });
    const hex = (node: Node) => leaderBatches(node.cluster, "orders", 0).map((x) => `${x.offset}:${x.hex}`);
    expect(hex(b)).toEqual(hex(a));
    expect(hex(b)).toHaveLength(written());
  });
});
