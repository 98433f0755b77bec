import { describe, expect, it } from "vitest";
import { leaderBatches, topology } from "./helpers";
import { uncleanSourceOrders } from "./unclean-source";

describe("--failover-preview after an unclean election on the source (b paused, ahead of a)", () => {
  it("names the records a wrote in its new epoch, which the failback then truncates", async () => {
    const t = topology(["a", "b"]);
    const { a, b, send, leaderGoesOnAlone, electFollowerUncleanly } = await uncleanSourceOrders(t);
    const bEnd = () => b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log.logEndOffset;

    // On a, the follower falls out of sync and the leader goes on alone in a new epoch; b mirrors that.
    await t.until(() => bEnd() === 5n, "b has the first 5");
    await leaderGoesOnAlone();
    await t.until(() => bEnd() === 8n, "b has all 8");
    await t.run(b.mirroring.admin.pauseTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "PAUSED"));

    // The out-of-sync follower is elected uncleanly (offsets 0-4 only) and a writes 2 records at 5-6.
    await electFollowerUncleanly();
    for (let i = 0; i < 2; i++) await send(`after-${i}`);
    const onA = leaderBatches(a.cluster, "orders", 0);
    expect(onA.map((x) => x.offset)).toEqual([0n, 1n, 2n, 3n, 4n, 5n, 6n]);

    // b is ahead of a (8 > 7): lag 0. Still, a failback cuts a at 5, where epoch 1 ends on a.
    const [row] = await t.run(b.mirroring.admin.previewFailover("dr", "orders"));
    expect(row!.lag).toBe(0n);
    expect(row!.failbackTruncation).toEqual({ fromOffset: 5n, records: 2n });

    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.until(
      () =>
        JSON.stringify(leaderBatches(a.cluster, "orders", 0).map((x) => x.hex)) ===
        JSON.stringify(leaderBatches(b.cluster, "orders", 0).map((x) => x.hex)),
      "a a copy of b",
    );
    // What the preview said: a's records at 5 and 6 are gone, those before kept.
    const after = leaderBatches(a.cluster, "orders", 0);
    expect(after.slice(0, 5).map((x) => x.hex)).toEqual(onA.slice(0, 5).map((x) => x.hex));
    expect(after.filter((x) => onA.slice(5).some((y) => y.hex === x.hex))).toEqual([]);
  });
});
