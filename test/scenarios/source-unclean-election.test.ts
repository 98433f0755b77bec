import { describe, expect, it, vi } from "vitest";
import { leaderBatches, topology } from "./helpers";
import { uncleanSourceOrders } from "./unclean-source";

describe("a source leader elected without the mirror's latest epoch (issue 11, item 2)", () => {
  it("the destination keeps every record the source still has, and ends offset-identical", async () => {
    const t = topology(["a", "b"]);
    const { a, b, send, leaderGoesOnAlone, electFollowerUncleanly } = await uncleanSourceOrders(t);
    const caughtUp = async () => {
      const rows = await b.mirroring.admin.describe("dr");
      return rows.length === 1 && rows.every((r) => r.state === "MIRRORING" && r.lag === 0n);
    };
    await t.until(caughtUp, "dr caught up");

    // On a, the follower falls out of sync and the leader goes on alone in a new epoch; b mirrors that.
    await leaderGoesOnAlone();
    await t.until(
      async () =>
        (await caughtUp()) && b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log.logEndOffset === 8n,
      "dr has all 8",
    );

    // Watch every truncation of b's copy from now on.
    const log = b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
    const truncations: bigint[] = [];
    const highWatermarks: bigint[] = [];
    const truncateTo = log.truncateTo.bind(log);
    vi.spyOn(log, "truncateTo").mockImplementation((offset) => {
      if (offset < log.logEndOffset) {
        truncations.push(offset);
        highWatermarks.push(log.highWatermark);
      }
      return truncateTo(offset);
    });
    const truncateFully = log.truncateFullyAndStartAt.bind(log);
    vi.spyOn(log, "truncateFullyAndStartAt").mockImplementation((offset) => {
      truncations.push(-1n); // everything goes
      truncateFully(offset);
    });

    // The out-of-sync follower is elected uncleanly: it has offsets 0-4 (epoch 0) and nothing of epoch 1.
    await electFollowerUncleanly();
    // Before a writes anything in its new epoch, b meets the divergence (a's new leader has no batch of
    // epoch 2 yet, so only its election tells where epoch 1 ends) and drops what a lost.
    await t.until(() => log.logEndOffset === 5n, "b truncated what a lost");
    for (let i = 0; i < 2; i++) await send(`after-${i}`);
    const batchesOf = (cluster: typeof a.cluster) =>
      leaderBatches(cluster, "orders", 0).map((x) => [x.offset.toString(), x.hex]);
    // (describe's lag is 0 while b is ahead of a, so wait for the logs themselves.)
    await t.until(
      () => JSON.stringify(batchesOf(b.cluster)) === JSON.stringify(batchesOf(a.cluster)),
      "b offset-identical to a",
    );

    // b dropped only what a lost (offsets 5-7), in one truncation to 5, never below: records a still has
    // were never removed from b (today's main truncated to the log start and fetched them again).
    expect(truncations).toEqual([5n]);
    expect(highWatermarks).toEqual([8n]);
    const onA = batchesOf(a.cluster);
    const onB = batchesOf(b.cluster);
    expect(onB).toEqual(onA);
    expect(onB.length).toBe(7);

    // Fail over: b keeps all 7 records at the same offsets.
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.until(
      async () => (await b.mirroring.admin.describe("dr")).every((r) => r.state === "STOPPED"),
      "STOPPED",
    );
    const kept = leaderBatches(b.cluster, "orders", 0).filter((x) => !x.batch.isControl);
    expect(kept.map((x) => [x.offset.toString(), x.hex])).toEqual(onA);
  });
});
