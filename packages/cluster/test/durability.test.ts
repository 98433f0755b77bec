import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { decodeRecords } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { batch, batchesOf, keyedBatch, testCluster } from "./helpers";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cluster-mirror-"));
  dirs.push(d);
  return d;
}

describe("durability and log maintenance", () => {
  it("recovers every acknowledged batch from disk after all brokers crash", async () => {
    const dataDir = tempDir();
    const { cluster, settle } = testCluster({ dataDir, fsync: false });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    for (let i = 0; i < 5; i++) {
      const p = cluster
        .leaderFor("t", 0)
        .produce({ topic: "t", partition: 0, batch: batch([`v${i}`]), acks: -1 });
      settle();
      await p;
    }
    const before = batchesOf(cluster, 0, "t").map((b) => b.buffer.toString("hex"));
    expect(fs.existsSync(path.join(dataDir, "broker-0", "t-0", "00000000000000000000.log"))).toBe(true);
    for (const id of [0, 1, 2]) cluster.crashBroker(id);
    for (const id of [2, 1, 0]) cluster.startBroker(id);
    settle(1000);
    const leader = cluster.leaderFor("t", 0);
    const after = batchesOf(cluster, leader.brokerId, "t").map((b) => b.buffer.toString("hex"));
    expect(after).toEqual(before);
    const fetched = leader.fetch({
      topic: "t",
      partition: 0,
      fetchOffset: 0n,
      maxBytes: 1 << 20,
      isolationLevel: "read_uncommitted",
    });
    expect(fetched.highWatermark).toBe(5n);
    for (const id of [0, 1, 2]) expect(batchesOf(cluster, id, "t")).toHaveLength(5);
  });

  it("keeps the high watermark across a clean restart through the checkpoint file", async () => {
    const dataDir = tempDir();
    const { cluster, settle } = testCluster({ dataDir, fsync: false, brokers: 1 });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
    settle();
    await cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a", "b", "c"]), acks: 1 });
    cluster.stopBroker(0);
    expect(fs.readFileSync(path.join(dataDir, "broker-0", "replication-offset-checkpoint"), "utf8")).toBe(
      "0\n1\nt 0 3\n",
    );
    cluster.startBroker(0);
    settle();
    expect(cluster.broker(0)!.replica("t", 0)?.log.highWatermark).toBe(3n);
  });

  it("deletes records up to an offset on the leader and the followers follow the log start", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1, 2]],
      configs: { "segment.bytes": "100" },
    });
    settle();
    for (let i = 0; i < 4; i++) {
      const p = cluster
        .broker(0)!
        .produce({ topic: "t", partition: 0, batch: batch([`value-${i}`]), acks: -1 });
      settle();
      await p;
    }
    expect(cluster.broker(0)!.deleteRecords("t", 0, 2n)).toBe(2n);
    settle();
    for (const id of [0, 1, 2]) expect(cluster.broker(id)!.replica("t", 0)?.log.logStartOffset).toBe(2n);
    let code = 0;
    try {
      cluster.broker(0)!.fetch({
        topic: "t",
        partition: 0,
        fetchOffset: 0n,
        maxBytes: 1000,
        isolationLevel: "read_uncommitted",
      });
    } catch (e) {
      code = (e as { code: number }).code;
    }
    expect(code).toBe(1);
  });

  it("a follower that starts over at a log start inside a batch takes that batch whole and rejoins the ISR", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    cluster.stopBroker(2);
    settle(30_000);
    const values = Array.from({ length: 30 }, (_, i) => `v${i}`);
    const p = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(values), acks: -1 });
    settle();
    await p;
    // Offsets 0-29 are one batch; the log start now lies inside it, past broker 2's log end (0).
    expect(cluster.broker(0)!.deleteRecords("t", 0, 12n)).toBe(12n);
    cluster.startBroker(2);
    settle(30_000);
    // Before: broker 2 started over at 12, the leader sent the batch at 0, and the append was refused on
    // every fetch ("first offset 0 is below the log end offset 12"): out of the ISR for good.
    const log = cluster.broker(2)!.replica("t", 0)!.log;
    expect([log.logStartOffset, log.logEndOffset, log.highWatermark]).toEqual([12n, 30n, 30n]);
    expect([...log.batches()].map((b) => b.baseOffset)).toEqual([0n]);
    expect(cluster.controller.image.partition("t", 0)!.isr).toContain(2);
  });

  it("compacts compacted topics and applies retention to the others on the cleaner's schedule", async () => {
    const { cluster, settle } = testCluster({ brokers: 1 });
    cluster.controller.createTopic({
      name: "c",
      replicaAssignment: [[0]],
      configs: { "cleanup.policy": "compact", "segment.bytes": "100" },
    });
    cluster.controller.createTopic({
      name: "r",
      replicaAssignment: [[0]],
      configs: { "retention.ms": "1000", "segment.bytes": "100" },
    });
    settle();
    for (let i = 0; i < 6; i++) {
      await cluster
        .broker(0)!
        .produce({ topic: "c", partition: 0, batch: keyedBatch([["k", `v${i}`]]), acks: 1 });
      await cluster.broker(0)!.produce({ topic: "r", partition: 0, batch: batch([`r${i}`]), acks: 1 });
    }
    const compacted = cluster.broker(0)!.replica("c", 0)!.log;
    const retained = cluster.broker(0)!.replica("r", 0)!.log;
    expect(batchesOf(cluster, 0, "c")).toHaveLength(6);
    // The cleaner runs every 30 s of (virtual) time; the records are then older than retention.ms.
    settle(30_000);
    const values = batchesOf(cluster, 0, "c").flatMap((b) =>
      decodeRecords(b).map((r) => r.value?.toString()),
    );
    // As in Kafka, the active segment (v5) is never cleaned, and the cleaned range keeps its latest value (v4).
    expect(values).toEqual(["v4", "v5"]);
    // Offsets are kept: the last record is still at offset 5.
    expect(compacted.logEndOffset).toBe(6n);
    expect(retained.logStartOffset).toBeGreaterThan(0n);
    expect(retained.logEndOffset).toBe(6n);
  });
});
