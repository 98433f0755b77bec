import { describe, expect, it } from "vitest";
import { batchesOf, sourceBatch } from "./helpers";
import { mirroredPartition } from "./mirrored-partition";

describe("a mirror's truncation of the leader reaches every replica (ReplicaTruncation records)", () => {
  it("a replica down while the leader truncated and stored other batches of the same epochs converges", () => {
    const { cluster, settle, hex, owed } = mirroredPartition();
    cluster.crashBroker(2);
    settle();
    const leader = cluster.broker(0)!;
    // The mirror aligns with its source: offsets 1 and 2 go, and the source's batches at the same offsets,
    // of the same epoch 0, take their place. Broker 2 still holds the old ones.
    leader.truncateTo("m", 0, 1n);
    leader.appendAsIs("m", 0, [sourceBatch(1n, 0, "B"), sourceBatch(2n, 0, "C")]);
    settle();
    // Broker 1 followed at once and said so; broker 2 owes the cut.
    expect([...(owed()?.keys() ?? [])]).toEqual([2]);
    expect(hex(1)).toEqual(hex(0));
    cluster.startBroker(2);
    settle(1000);
    // KIP-320 alone sees epoch 0 ending at 3 on both: without the owed cut broker 2 would keep "b" and "c".
    expect(hex(2)).toEqual(hex(0));
    expect(owed()).toBeUndefined();
  });

  it("a follower elected before it fetched applies the cut before it leads", () => {
    const { cluster, settle, hex, owed } = mirroredPartition();
    cluster.broker(0)!.truncateTo("m", 0, 1n);
    // The leader dies before its followers fetch: the new leader must not serve the records the mirror cut.
    cluster.crashBroker(0);
    settle();
    const meta = cluster.controller.image.partition("m", 0)!;
    expect(meta.leader).not.toBe(0);
    expect(cluster.broker(meta.leader)!.replica("m", 0)!.log.logEndOffset).toBe(1n);
    expect(owed()?.get(meta.leader)).toBeUndefined();
    cluster.startBroker(0);
    settle(1000);
    for (const id of [0, 1, 2]) expect(hex(id)).toEqual([sourceBatch(0n, 0, "a").toString("hex")]);
    expect(owed()).toBeUndefined();
  });

  it("a cut is applied once: a leader elected before its report landed keeps what it fetched since", () => {
    const { cluster, settle, hex, owed } = mirroredPartition();
    cluster.controller.setAvailable(false);
    // Recording the cut needs the controller: the truncation is refused (the mirror retries it).
    expect(() => cluster.broker(0)!.truncateTo("m", 0, 1n)).toThrow(/controller is failing over/);
    expect(cluster.broker(0)!.replica("m", 0)!.log.logEndOffset).toBe(3n);
    cluster.controller.setAvailable(true);
    cluster.broker(0)!.truncateTo("m", 0, 1n);
    cluster.controller.setAvailable(false);
    settle();
    // Both followers cut their logs, but the controller did not hear it: the cut stays owed.
    expect(hex(1)).toEqual(hex(0));
    expect([...(owed()?.keys() ?? [])].sort()).toEqual([1, 2]);
    // Fetched after the cut: a second application would drop it again.
    cluster.broker(0)!.appendAsIs("m", 0, sourceBatch(1n, 0, "B"));
    settle(1000);
    expect(hex(1)).toEqual(hex(0));
    expect(hex(2)).toEqual(hex(0));
    expect(cluster.broker(0)!.replica("m", 0)!.log.highWatermark).toBe(2n);
    // The leader dies as the controller returns, before a report lands: the new leader (which still owes
    // the cut on the controller's books) must not cut again, or the committed "B" would be lost.
    cluster.controller.setAvailable(true);
    cluster.crashBroker(0);
    settle(1000);
    const leader = cluster.controller.image.partition("m", 0)!.leader;
    expect(batchesOf(cluster, leader, "m").map((b) => b.buffer.toString("hex"))).toEqual([
      sourceBatch(0n, 0, "a").toString("hex"),
      sourceBatch(1n, 0, "B").toString("hex"),
    ]);
    expect(owed()?.get(leader)).toBeUndefined();
  });

  it("a replica restarted before its report landed does not cut again what it fetched since", () => {
    const { cluster, settle, hex, owed } = mirroredPartition();
    cluster.broker(0)!.truncateTo("m", 0, 1n);
    cluster.controller.setAvailable(false);
    settle();
    cluster.broker(0)!.appendAsIs("m", 0, sourceBatch(1n, 0, "B"));
    settle(1000);
    // Every replica cut and then fetched "B", now committed; the controller heard none of it.
    expect(hex(1)).toEqual(hex(0));
    expect(hex(2)).toEqual(hex(0));
    expect(cluster.broker(0)!.replica("m", 0)!.log.highWatermark).toBe(2n);
    expect([...(owed()?.keys() ?? [])].sort()).toEqual([1, 2]);
    // Every broker crashes; the followers come back first and one of them is elected: it still owes the
    // cut on the controller's books, but it applied it already (stored on its disk), so "B" stays.
    for (const id of [0, 1, 2]) cluster.crashBroker(id);
    cluster.startBroker(1);
    cluster.startBroker(2);
    cluster.controller.setAvailable(true);
    settle(1000);
    const leader = cluster.controller.image.partition("m", 0)!.leader;
    expect([1, 2]).toContain(leader);
    expect(batchesOf(cluster, leader, "m").map((b) => b.buffer.toString("hex"))).toEqual([
      sourceBatch(0n, 0, "a").toString("hex"),
      sourceBatch(1n, 0, "B").toString("hex"),
    ]);
    expect(hex(1)).toEqual(hex(2));
    expect(owed()).toBeUndefined();
  });

  it("a second cut recorded before the first one's report landed does not cut what was fetched between", () => {
    const { cluster, settle, owed } = mirroredPartition();
    const leader = cluster.broker(0)!;
    leader.truncateTo("m", 0, 1n);
    cluster.controller.setAvailable(false);
    settle();
    // Both followers cut at 1 and fetched "B" and "C", now committed; the controller heard no report.
    leader.appendAsIs("m", 0, [sourceBatch(1n, 0, "B"), sourceBatch(2n, 0, "C")]);
    settle(1000);
    expect(leader.replica("m", 0)!.log.highWatermark).toBe(3n);
    // The controller is back and the mirror cuts again, at 2, before a retried report lands. A replica that
    // applied neither would cut at 1; these applied the first, so they owe only the cut at 2.
    cluster.controller.setAvailable(true);
    leader.truncateTo("m", 0, 2n);
    expect(
      owed()
        ?.get(1)
        ?.cuts.map((c) => c.offset),
    ).toEqual([1n, 2n]);
    cluster.crashBroker(0);
    settle(1000);
    const next = cluster.controller.image.partition("m", 0)!.leader;
    expect(batchesOf(cluster, next, "m").map((b) => b.buffer.toString("hex"))).toEqual([
      sourceBatch(0n, 0, "a").toString("hex"),
      sourceBatch(1n, 0, "B").toString("hex"),
    ]);
    expect(owed()?.get(next)).toBeUndefined();
  });

  it("an idle follower's report the controller missed is sent again until heard", () => {
    const { cluster, settle, hex, owed } = mirroredPartition();
    cluster.broker(0)!.truncateTo("m", 0, 1n);
    cluster.controller.setAvailable(false);
    settle(1000);
    expect(hex(1)).toEqual(hex(0));
    expect(hex(2)).toEqual(hex(0));
    expect([...(owed()?.keys() ?? [])].sort()).toEqual([1, 2]);
    // Nothing new to fetch: only the retry tells the controller.
    cluster.controller.setAvailable(true);
    settle(1000);
    expect(owed()).toBeUndefined();
  });

  it("a replica owing two cuts applies the deeper one; a full truncation wins over a partial one", () => {
    const { cluster, settle, hex, owed } = mirroredPartition();
    cluster.crashBroker(2);
    settle();
    const leader = cluster.broker(0)!;
    leader.truncateTo("m", 0, 2n);
    leader.appendAsIs("m", 0, sourceBatch(2n, 0, "C"));
    leader.truncateTo("m", 0, 1n);
    settle();
    expect(owed()?.get(2)).toMatchObject({ offset: 1n, full: false });
    leader.appendAsIs("m", 0, sourceBatch(1n, 0, "B"));
    leader.truncateFullyAndStartAt("m", 0, 5n);
    expect(owed()?.get(2)).toMatchObject({ offset: 5n, full: true });
    leader.appendAsIs("m", 0, sourceBatch(5n, 0, "F"));
    settle();
    cluster.startBroker(2);
    settle(1000);
    expect(hex(2)).toEqual(hex(0));
    expect(cluster.broker(2)!.replica("m", 0)!.log.logStartOffset).toBe(5n);
    expect(owed()).toBeUndefined();
  });

  it("the leader's high watermark counts nothing past its cut until each follower fetched again", () => {
    const { cluster, settle, hex } = mirroredPartition();
    const leader = cluster.broker(0)!;
    const hw = () => leader.replica("m", 0)!.log.highWatermark;
    expect(hw()).toBe(3n);
    // The followers last reported log end 3, with "b" and "c" at offsets 1 and 2. After the cut, the
    // source's "B", "C", "D" take offsets 1 to 3 on the leader only: none of them is replicated yet.
    leader.truncateTo("m", 0, 1n);
    leader.appendAsIs("m", 0, [sourceBatch(1n, 0, "B"), sourceBatch(2n, 0, "C"), sourceBatch(3n, 0, "D")]);
    expect(hw()).toBe(1n);
    expect(leader.followersTruncated("m", 0)).toBe(false);
    // Had the high watermark moved to 3, a consumer could read "B" and "C" as committed, and the leader's
    // death now would lose them: the next leader applies the same cut before it leads.
    cluster.crashBroker(0);
    settle();
    const next = cluster.controller.image.partition("m", 0)!.leader;
    expect(cluster.broker(next)!.replica("m", 0)!.log.logEndOffset).toBe(1n);
    cluster.startBroker(0);
    settle(1000);
    for (const id of [1, 2]) expect(hex(id)).toEqual(hex(0));
  });

  it("a cut inside a batch counts each follower only up to where the leader's log really ends", () => {
    // "b", "c", "d" in one batch at offsets 1 to 3, replicated and committed.
    const { cluster, settle, hex } = mirroredPartition({}, [
      sourceBatch(0n, 0, "a"),
      sourceBatch(1n, 0, ["b", "c", "d"]),
    ]);
    const leader = cluster.broker(0)!;
    const hw = () => leader.replica("m", 0)!.log.highWatermark;
    expect(hw()).toBe(4n);
    // A cut at 2 removes the whole batch holding it: the leader's log ends at 1, and the source's "B"
    // takes offset 1 on the leader only (the followers still hold "b").
    leader.truncateTo("m", 0, 2n);
    expect(leader.replica("m", 0)!.log.logEndOffset).toBe(1n);
    leader.appendAsIs("m", 0, sourceBatch(1n, 0, "B"));
    expect(hw()).toBe(1n);
    settle();
    expect(hw()).toBe(2n);
    for (const id of [1, 2]) expect(hex(id)).toEqual(hex(0));
  });

  it("followersTruncated holds once every in-sync follower fetched after the cut", () => {
    const { cluster, settle } = mirroredPartition();
    const leader = cluster.broker(0)!;
    leader.truncateTo("m", 0, 1n);
    leader.appendAsIs("m", 0, [sourceBatch(1n, 0, "B"), sourceBatch(2n, 0, "C"), sourceBatch(3n, 0, "D")]);
    // Their reported ends (3) are below the leader's (4), but they still hold the cut batches.
    expect(leader.followersTruncated("m", 0)).toBe(false);
    settle();
    expect(leader.followersTruncated("m", 0)).toBe(true);
    expect(leader.replica("m", 0)!.log.highWatermark).toBe(4n);
  });

  it("a truncation that cuts nothing records nothing", () => {
    const { cluster, owed } = mirroredPartition();
    const before = cluster.controller.metadataLog().length;
    cluster.broker(0)!.truncateTo("m", 0, 3n);
    expect(cluster.controller.metadataLog().length).toBe(before);
    expect(owed()).toBeUndefined();
  });
});
