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

const committed = (n: Node, group = "app") => n.cluster.groups.fetchOffsets(group).get("orders:0")?.offset;
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
    // A's own consumers' offset on its divergent tail (18) is moved back to the failback's cut (10) as the
    // tail is cut, never left past it until the first refresh brings B's offset (bEnd).
    expect(trace.filter((o) => o !== bEnd).every((o) => o <= 10n)).toBe(true);
    expect(trace[0]).toBe(10n);
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

  it("failback: a group only the old primary has loses its offset past the cut, never skips the new primary's records there", async () => {
    // Unplanned failover to B at 10. A, cut off, took 8 more records, read by a group B never heard of.
    const { t, a, b } = await syncedThenFailedOver(10n);
    await produce(t, a, 8, "divergent");
    a.cluster.groups.commitOffsets({
      groupId: "audit",
      offsets: [{ topic: "orders", partition: 0, offset: hw(a) }],
    });
    expect(committed(a, "audit")).toBe(18n);
    await produce(t, b, 8, "b");
    expect(b.cluster.groups.fetchOffsets("audit").size).toBe(0);

    // Failback: A's divergent tail [10, 18) is cut and B's records take those offsets.
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092", ...FAST }));
    await t.run(a.mirroring.admin.addTopics("back", "orders", { truncateLocalWrites: true }));
    let highest = 0n;
    await t.until(async () => {
      const [row] = await a.mirroring.admin.describe("back");
      const offset = committed(a, "audit");
      // Never past what A holds once its tail was cut (nothing of B's there was read by the group).
      if (row?.state === "MIRRORING" && offset !== undefined && offset > hw(a)) highest = offset;
      return row?.state === "MIRRORING" && row.lag === 0n;
    }, "back caught up");
    await t.advance(3_000);
    // The group read A's records up to 18, of which [10, 18) are gone: it resumes at the cut, at B's
    // records, never at 18 (B's barrier and records b0..b6, which it never read, skipped).
    expect(committed(a, "audit")).toBe(10n);
    expect(highest).toBe(0n);
  });
});
