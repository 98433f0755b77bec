import { describe, expect, it } from "vitest";
import { topology } from "./helpers";

type Topology = ReturnType<typeof topology>;
type Node = ReturnType<Topology["node"]>;

const FAST = { "mirror.metadata.refresh.interval.ms": "1000" };

async function produce(t: Topology, n: Node, count: number, tag: string): Promise<void> {
  const producer = n.kafka.producer({ idempotent: true });
  await t.run(producer.connect());
  for (let i = 0; i < count; i++)
    await t.run(
      producer.send({ topic: "orders", messages: [{ key: `k${i}`, value: `${tag}${i}` }], acks: -1 }),
    );
  await t.run(producer.disconnect());
}

const committed = (n: Node) => n.cluster.groups.fetchOffsets("app").get("orders:0")?.offset;
const hw = (n: Node) => n.cluster.leaderFor("orders", 0).replica("orders", 0)!.log.highWatermark;

/**
 * A mirrors 10 records of `orders` to B, its group `app` committed at `committedOnA` and synced to B; then
 * B fails over (STOPPED).
 */
async function syncedThenFailedOver(committedOnA: bigint) {
  const t = topology(["a", "b"]);
  const a = t.node("a");
  const b = t.node("b");
  await t.run(
    a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
  );
  await produce(t, a, 10, "a");
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092", ...FAST }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  a.cluster.groups.commitOffsets({
    groupId: "app",
    offsets: [{ topic: "orders", partition: 0, offset: committedOnA }],
  });
  await t.until(() => committed(b) === committedOnA, "app synced to b");
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.until(
    async () => (await b.mirroring.admin.describe("dr")).every((r) => r.state === "STOPPED"),
    "STOPPED",
  );
  return { t, a, b };
}

describe("consumer group offsets across failover and failback", () => {
  it("after the failover B's consumers own their offsets; on failback A ends with B's offsets", async () => {
    // Failover to B; B's consumers go on there.
    const { t, a, b } = await syncedThenFailedOver(6n);
    await produce(t, b, 5, "b");
    const bEnd = hw(b);
    b.cluster.groups.commitOffsets({
      groupId: "app",
      offsets: [{ topic: "orders", partition: 0, offset: bEnd }],
    });
    // A (the old primary, split off) still had consumers that committed further on its own log.
    await produce(t, a, 8, "divergent");
    a.cluster.groups.commitOffsets({
      groupId: "app",
      offsets: [{ topic: "orders", partition: 0, offset: hw(a) }],
    });
    expect(hw(a)).toBeGreaterThan(bEnd);
    await t.advance(10_000);
    expect(committed(b)).toBe(bEnd);

    // Failback: A mirrors from B.
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092", ...FAST }));
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    const trace: bigint[] = [];
    await t.until(async () => {
      const offset = committed(a);
      if (offset !== undefined) trace.push(offset);
      const [row] = await a.mirroring.admin.describe("back");
      return row?.state === "MIRRORING" && row.lag === 0n && offset === bEnd;
    }, "back caught up with B's offsets");
    // Until the first refresh A keeps its own consumers' offset on its divergent tail (18), past the 10
    // records its failback truncation keeps: what the --promote test below shows a final sync must replace.
    expect(trace[0]).toBe(18n);
  });

  it("failback then --promote: A's consumers resume at B's offsets, not at A's stale ones past B's records", async () => {
    // Unplanned failover to B. A, cut off, took 8 more records its consumers read and committed (18).
    const { t, a, b } = await syncedThenFailedOver(10n);
    await produce(t, a, 8, "divergent");
    a.cluster.groups.commitOffsets({
      groupId: "app",
      offsets: [{ topic: "orders", partition: 0, offset: hw(a) }],
    });
    expect(committed(a)).toBe(18n);
    // On B the consumers read the first of 8 new records: committed 12 (B's PID reset barrier is at 10).
    await produce(t, b, 8, "b");
    b.cluster.groups.commitOffsets({
      groupId: "app",
      offsets: [{ topic: "orders", partition: 0, offset: 12n }],
    });

    // Failback (default refresh interval), then the planned switch back to A once it caught up.
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("back", "orders", { truncateLocalWrites: true }));
    await t.run(a.mirroring.admin.promoteTopics("back", "orders"));
    // The consumers resume on A where they were on B: at 12, not at 18 (records b1..b6 skipped).
    expect(committed(a)).toBe(12n);
  });
});
