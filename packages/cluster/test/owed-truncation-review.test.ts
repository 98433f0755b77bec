import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_PENDING_CUTS } from "../src/pending-truncation";
import { batchesOf, sourceBatch, testCluster } from "./helpers";
import { mirroredPartition } from "./mirrored-partition";

const h = (offset: bigint, v: string) => sourceBatch(offset, 0, v).toString("hex");

describe("review: owed mirror cuts", () => {
  it("more than MAX_PENDING_CUTS cuts before a report lands do not cut again what was fetched after the first", () => {
    const { cluster, settle, owed } = mirroredPartition();
    const leader = cluster.broker(0)!;
    leader.truncateTo("m", 0, 1n);
    cluster.controller.setAvailable(false);
    settle();
    // Both followers cut at 1 and fetched "B", now committed; the controller heard no report.
    leader.appendAsIs("m", 0, sourceBatch(1n, 0, "B"));
    settle(1000);
    expect(leader.replica("m", 0)!.log.highWatermark).toBe(2n);
    cluster.controller.setAvailable(true);
    // The mirror re-aligns its (uncommitted) tail at 2 again and again before any follower fetches.
    for (let i = 0; i < MAX_PENDING_CUTS; i++) {
      leader.appendAsIs("m", 0, sourceBatch(2n, 0, `x${i}`));
      leader.truncateTo("m", 0, 2n);
    }
    expect(owed()?.get(1)?.cuts.length).toBe(MAX_PENDING_CUTS);
    cluster.crashBroker(0);
    settle(1000);
    const next = cluster.controller.image.partition("m", 0)!.leader;
    expect([1, 2]).toContain(next);
    // "B" was committed (high watermark 2): the new leader applied the first cut already.
    expect(batchesOf(cluster, next, "m").map((b) => b.buffer.toString("hex"))).toEqual([
      h(0n, "a"),
      h(1n, "B"),
    ]);
  });
});

describe("review: the leader's own cut", () => {
  it("a leader whose own cut failed after the record (full disk) does not keep the cut batches as a follower", () => {
    const { cluster, settle, hex } = mirroredPartition();
    const leader = cluster.broker(0)!;
    cluster.setDiskFull(0, true);
    // The record lands (the controller's log is elsewhere); the leader's own cut fails.
    let failed = false;
    try {
      leader.truncateFullyAndStartAt("m", 0, 1n);
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
    const held = hex(0);
    // The leader dies before anyone fetched; broker 1 leads, having applied the cut (empty from 1).
    cluster.crashBroker(0);
    settle();
    const next = cluster.controller.image.partition("m", 0)!.leader;
    expect([1, 2]).toContain(next);
    expect(cluster.broker(next)!.replica("m", 0)!.log.logStartOffset).toBe(1n);
    // The mirror stores the source's batches there, of the same epoch 0 as the ones it cut.
    cluster.broker(next)!.appendAsIs("m", 0, [sourceBatch(1n, 0, "B"), sourceBatch(2n, 0, "C")]);
    settle();
    cluster.setDiskFull(0, false);
    cluster.startBroker(0);
    settle(1000);
    expect(held.length).toBeGreaterThan(0);
    // KIP-320 sees epoch 0 ending at 3 on both: broker 0 must have applied the cut it made as leader.
    expect(hex(0)).toEqual(hex(next));
  });
});

describe("review: the leader's own cut, stored", () => {
  it("a leader that could not store its own cut (full disk) does not cut again after a restart what it appended since", () => {
    const { cluster, settle, hex } = mirroredPartition();
    const leader = cluster.broker(0)!;
    cluster.setDiskFull(0, true);
    // The cut frees space and succeeds; storing that the leader made it fails.
    expect(() => leader.truncateTo("m", 0, 1n)).toThrow(/ENOSPC/);
    expect(leader.replica("m", 0)!.log.logEndOffset).toBe(1n);
    cluster.setDiskFull(0, false);
    // The disk has room again: the mirror stores the source's "B" at the cut.
    leader.appendAsIs("m", 0, sourceBatch(1n, 0, "B"));
    settle(1000);
    expect(leader.replica("m", 0)!.log.highWatermark).toBe(2n);
    for (const id of [1, 2]) expect(hex(id)).toEqual(hex(0));
    // Every broker crashes, the leader last; it comes back first and leads again: "B" is committed.
    for (const id of [1, 2, 0]) cluster.crashBroker(id);
    cluster.startBroker(0);
    settle(1000);
    expect(cluster.controller.image.partition("m", 0)!.leader).toBe(0);
    expect(hex(0)).toEqual([h(0n, "a"), h(1n, "B")]);
  });
});

describe("review: which stored cuts a replica keeps", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it("a replica whose log could not be opened yet keeps its stored cut when another replica stores one", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "owed-review-"));
    dirs.push(dataDir);
    const { cluster, settle } = testCluster({ dataDir, fsync: false });
    try {
      const c = cluster.controller;
      c.createTopic({ name: "n", replicaAssignment: [[0, 1]], configs: { "mirror.name": "dr" } });
      c.createTopic({ name: "m", replicaAssignment: [[2, 1]], configs: { "mirror.name": "dr" } });
      settle();
      const abc = [sourceBatch(0n, 0, "a"), sourceBatch(1n, 0, "b"), sourceBatch(2n, 0, "c")];
      cluster.broker(0)!.appendAsIs("n", 0, abc);
      cluster.broker(2)!.appendAsIs("m", 0, abc);
      settle(1000);
      // n: broker 1 applies the cut and stores it, the controller does not hear its report; "B" is committed.
      cluster.broker(0)!.truncateTo("n", 0, 1n);
      c.setAvailable(false);
      settle();
      cluster.broker(0)!.appendAsIs("n", 0, sourceBatch(1n, 0, "B"));
      settle(1000);
      expect(cluster.broker(0)!.replica("n", 0)!.log.highWatermark).toBe(2n);
      expect(c.image.partition("n", 0)!.pendingTruncations?.has(1)).toBe(true);
      // Broker 0 dies as the controller returns: broker 1 leads n; then it dies too, before its report.
      c.setAvailable(true);
      cluster.crashBroker(0);
      expect(c.image.partition("n", 0)!.leader).toBe(1);
      cluster.crashBroker(1);
      expect(c.image.partition("n", 0)!.isr).toEqual([1]);
      expect(c.image.partition("n", 0)!.pendingTruncations?.has(1)).toBe(true);
      // m's leader cuts while broker 1 is down: broker 1 owes it.
      cluster.broker(2)!.truncateTo("m", 0, 1n);
      // Broker 1 restarts while n's log directory cannot be opened (a failing disk); m's opens.
      const nDir = path.join(dataDir, "broker-1", "n-0");
      const aside = path.join(dataDir, "n-0-aside");
      fs.renameSync(nDir, aside);
      fs.writeFileSync(nDir, "");
      cluster.startBroker(1);
      settle();
      expect(cluster.broker(1)!.replica("n", 0)).toBeUndefined();
      // Broker 1 applied the cut it owed on m (and stored it).
      expect(cluster.broker(1)!.replica("m", 0)!.log.logEndOffset).toBe(1n);
      settle(50);
      // The directory is back: broker 1 opens n and leads it. It applied n's cut before: "B" stays.
      fs.rmSync(nDir);
      fs.renameSync(aside, nDir);
      settle(1000);
      expect(c.image.partition("n", 0)!.leader).toBe(1);
      expect(batchesOf(cluster, 1, "n").map((b) => b.buffer.toString("hex"))).toEqual([
        h(0n, "a"),
        h(1n, "B"),
      ]);
    } finally {
      for (const id of cluster.runningBrokers()) cluster.crashBroker(id);
      cluster.close();
    }
  });
});

describe("review: a replica that leads on the replayed image", () => {
  it("does not lead over the batches the mirror cut while its cut fails (full disk)", () => {
    const { cluster, settle, owed } = mirroredPartition({ logger: { warn: () => {} } });
    cluster.crashBroker(1);
    settle();
    cluster.setDiskFull(2, true);
    cluster.broker(0)!.truncateFullyAndStartAt("m", 0, 1n);
    settle();
    expect(owed()?.get(2)).toMatchObject({ offset: 1n, full: true });
    // The leader dies: broker 2 is elected but does not lead while it cannot cut.
    cluster.crashBroker(0);
    settle();
    expect(cluster.controller.image.partition("m", 0)!.leader).toBe(2);
    expect(() => cluster.broker(2)!.listOffsets("m", 0, -1n)).toThrow(/is not the leader/);
    // Broker 2 stops while the metadata log cannot take its fencing: the image keeps it leading.
    cluster.controller.setJournal(() => {
      throw new Error("ENOSPC: no space left on device, write");
    });
    cluster.crashBroker(2);
    cluster.controller.setJournal(undefined);
    // It starts again, its disk still full: the replay makes it the leader the image says it is.
    cluster.startBroker(2);
    settle();
    expect(cluster.controller.image.partition("m", 0)!.leader).toBe(2);
    // It must not serve "b" and "c", which the mirror cut, as the leader.
    expect(() => cluster.broker(2)!.listOffsets("m", 0, -1n)).toThrow(/is not the leader/);
    cluster.setDiskFull(2, false);
    settle(1000);
    expect(cluster.broker(2)!.listOffsets("m", 0, -1n).offset).toBe(1n);
  });
});
