import { ClusterError } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { topology } from "./helpers";

/** a's own failover of the partition still running, as a failback right after it sees. */
const failingOver = () =>
  new KafkaError("MIRROR_FAILOVER_IN_PROGRESS", -1, true, "orders-0 is failing over (STOPPING)");
/** a's mirror coordinator for the partition moving (its `__mirror_state` leader restarting), in a's words. */
const coordinatorMoving = () =>
  new ClusterError(
    "COORDINATOR_NOT_AVAILABLE",
    "the mirror coordinator of mirror 'dr', topic orders partition 0 (__mirror_state-1) is not available (no running leader); retry after its election",
  );

/**
 * a's LME lookups answer `busy()` until `busyUntil` (virtual ms); then a answers as usual.
 */
function busySource(busyUntil: number, busy: () => Error = failingOver) {
  const t = topology(["a", "b"]);
  const a = t.node("a");
  const served = a.mirroring.asSource();
  const asked: number[] = [];
  t.registry.unregister("a:9092");
  t.registry.register("a:9092", a.cluster, {
    ...served,
    lastMirrorEpoch: async (topicId, partition) => {
      asked.push(t.clock.now());
      if (t.clock.now() < busyUntil) throw busy();
      return served.lastMirrorEpoch!(topicId, partition);
    },
  });
  return { t, a, b: t.node("b"), asked };
}

async function addOrders(
  t: ReturnType<typeof topology>,
  a: ReturnType<ReturnType<typeof topology>["node"]>,
  b: typeof a,
) {
  await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1 }] }));
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders", { truncateLocalWrites: true }));
}

describe("PREPARING waits out a source that says 'retry shortly' for its LME", () => {
  it.each([
    ["failing the partition over", failingOver],
    // Before: FAILED at once, each retry's backoff growing (COORDINATOR_NOT_AVAILABLE was not waited out).
    ["whose mirror coordinator is moving", coordinatorMoving],
  ])("a source %s for 5 s: PREPARING asks again, never FAILED, mirrors once it answers", async (_, busy) => {
    const start = 1_700_000_000_000;
    const { t, a, b, asked } = busySource(start + 5_000, busy);
    await addOrders(t, a, b);
    const states = new Set<string>();
    await t.until(async () => {
      const [row] = await b.mirroring.admin.describe("dr");
      if (row) states.add(row.state);
      return row?.state === "MIRRORING";
    }, "MIRRORING");
    expect(states.has("FAILED")).toBe(false);
    expect(t.clock.now() - start).toBeLessThan(7_000);
    // Asked about every 500 ms while busy, not in a tight loop.
    expect(asked.length).toBeGreaterThanOrEqual(8);
    expect(asked.length).toBeLessThanOrEqual(14);
  });

  it("a source busy for longer than 30 s: FAILED (retryable) with its words, as before", async () => {
    const start = 1_700_000_000_000;
    const { t, a, b } = busySource(start + 10 * 60_000);
    await addOrders(t, a, b);
    await t.until(async () => (await b.mirroring.admin.describe("dr"))[0]?.state === "FAILED", "FAILED");
    const elapsed = t.clock.now() - start;
    expect(elapsed).toBeGreaterThanOrEqual(30_000);
    expect(elapsed).toBeLessThan(32_000);
    expect((await b.mirroring.admin.describe("dr"))[0]).toMatchObject({
      retryAttempt: 0,
      errorMessage: expect.stringMatching(/failing over \(STOPPING\)/),
    });
  });
});
