import {
  ControlRecordType,
  crc32cOfRange,
  encodeEndTxnMarkerBatch,
  encodeRecordBatch,
  RecordBatch,
} from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { compareLatestByKey, latestCommittedByKey } from "../src/admin/verify-compacted";
import { addTopicsWhenReady, type EngineCluster, twoEngineClusters } from "./engine-helpers";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

const log = (c: EngineCluster) => c.cluster.leaderFor("changelog", 0).replica("changelog", 0)!.log;

/**
 * A compacted `changelog` (small segments, so the cleaner has rolled segments to clean) with 12 keyed
 * records over three keys, one batch each, then a tombstone of k0 (offsets 0-12), mirrored by `m` until
 * caught up, then paused: nothing is fetched while a test rewrites one side.
 */
async function pausedCompactedMirror() {
  const e = twoEngineClusters();
  closers.push(e.close);
  const { source, dest } = e;
  await source.kafka.admin().createTopics({
    topics: [
      {
        topic: "changelog",
        numPartitions: 1,
        replicationFactor: 1,
        configEntries: [
          { name: "cleanup.policy", value: "compact" },
          { name: "segment.bytes", value: "200" },
          { name: "min.insync.replicas", value: "1" },
        ],
      },
    ],
  });
  const producer = source.kafka.producer({ idempotent: true });
  await producer.connect();
  for (let i = 0; i < 12; i++)
    await producer.send({
      topic: "changelog",
      messages: [{ key: `k${i % 3}`, value: `v${i}`, partition: 0 }],
    });
  await producer.send({ topic: "changelog", messages: [{ key: "k0", value: null, partition: 0 }] });
  await producer.disconnect();
  await dest.mirroring.admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
  await addTopicsWhenReady(dest, "m", "changelog");
  await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
  await dest.mirroring.admin.pauseTopics("m", "changelog");
  await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
  expect(log(dest).logEndOffset).toBe(13n);
  return e;
}

const batchesCheck = async (dest: EngineCluster) =>
  (await dest.mirroring.admin.verifyMirror("m")).checks.find((c) => c.check === "batches")!;

describe("verify of a compacted topic whose cleaner rewrote one side after the copy", () => {
  it("agrees by the latest record of each key when the source's cleaner ran", async () => {
    const { source, dest } = await pausedCompactedMirror();
    log(source).compact();
    expect([...log(source).batches()].length).toBeLessThan([...log(dest).batches()].length);

    // Before: every batch the cleaner removed was "not on the source", for a copy that holds the same data.
    const check = await batchesCheck(dest);
    expect(check).toMatchObject({ ok: true, differences: [] });
    expect(check.compared).toMatch(/1 compacted partition whose cleaners rewrote one side by key/);
  }, 60_000);

  it("agrees when the copy's own cleaner ran instead", async () => {
    const { dest } = await pausedCompactedMirror();
    log(dest).compact();
    expect(await batchesCheck(dest)).toMatchObject({ ok: true, differences: [] });
  }, 60_000);

  it("names the key whose latest record differs", async () => {
    const { source, dest } = await pausedCompactedMirror();
    log(source).compact();
    // The copy's latest record of k1 (offset 10, "v10") says something else: its value's last byte flips
    // (in a copy of the bytes: in process the copy may share the source's memory).
    const copy = log(dest);
    const tail = [...copy.batches()].filter((b) => b.baseOffset >= 10n).map((b) => Buffer.from(b.buffer));
    const changed = tail[0]!;
    changed[changed.length - 2]! ^= 0x01;
    // A valid batch all the same: its CRC-32C (from the attributes, byte 21, on; stored at byte 17) again.
    changed.writeUInt32BE(crc32cOfRange(changed, 21, changed.length), 17);
    copy.truncateTo(10n);
    for (const bytes of tail) copy.appendAsIs(bytes);
    copy.updateHighWatermark(13n);

    const check = await batchesCheck(dest);
    expect(check.ok).toBe(false);
    expect(check.differences).toEqual([
      "changelog-0 (compacted, 10 batch difference(s): compared by latest record per key): key 'k1': latest record at offset 10 here, at offset 10 on the source with another value",
    ]);
  }, 60_000);
});

describe("the latest committed record of each key (verify of compacted topics)", () => {
  const record = (offsetDelta: number, key: string | null, value: string | null) => ({
    attributes: 0,
    offsetDelta,
    timestampDelta: 0n,
    key: key === null ? null : Buffer.from(key),
    value: value === null ? null : Buffer.from(value),
    headers: [],
  });
  const data = (baseOffset: bigint, entries: [string | null, string | null][], producerId = -1n) =>
    new RecordBatch(
      encodeRecordBatch({
        baseOffset,
        producerId,
        producerEpoch: producerId < 0n ? -1 : 0,
        baseSequence: producerId < 0n ? -1 : 0,
        isTransactional: producerId >= 0n,
        records: entries.map(([k, v], i) => record(i, k, v)),
      }),
    );
  const marker = (baseOffset: bigint, producerId: bigint, type: 0 | 1) =>
    new RecordBatch(
      encodeEndTxnMarkerBatch({
        type: type === 1 ? ControlRecordType.COMMIT : ControlRecordType.ABORT,
        producerId,
        producerEpoch: 0,
        coordinatorEpoch: 0,
        baseOffset,
        timestamp: 0n,
      }),
    );
  const values = (m: ReturnType<typeof latestCommittedByKey>) =>
    Object.fromEntries(
      [...m].map(([k, r]) => [
        Buffer.from(k, "hex").toString(),
        `${r.offset}:${r.value?.toString() ?? "null"}`,
      ]),
    );

  it("counts a transaction's records once committed, never aborted or still open ones, and no keyless record", () => {
    const batches = [
      data(0n, [
        ["a", "1"],
        [null, "no key"],
      ]),
      data(2n, [["a", "txn-committed"]], 7n),
      data(3n, [["b", "txn-aborted"]], 8n),
      marker(4n, 8n, 0),
      marker(5n, 7n, 1),
      data(6n, [["c", "txn-open"]], 9n),
      data(7n, [["b", "2"]]),
    ];
    expect(values(latestCommittedByKey(batches, 0n, 8n))).toEqual({ a: "2:txn-committed", b: "7:2" });
    // Only from `from` to `to`: b's record at 7 is past the end here.
    expect(values(latestCommittedByKey(batches, 1n, 7n))).toEqual({ a: "2:txn-committed" });
  });

  it("takes a transaction committed past the copy's high watermark as lag, though its record is below it", () => {
    // Source: k@0 "old", then k@1 in a transaction committed by the marker at 2. The copy's high watermark
    // is 2: it holds the transaction's record but not yet its COMMIT, so k is still "old" there.
    const source = [data(0n, [["k", "old"]]), data(1n, [["k", "new"]], 7n), marker(2n, 7n, 1)];
    const copy = source.slice(0, 2);
    const theirs = latestCommittedByKey(source, 0n, 3n);
    expect(values(theirs)).toEqual({ k: "1:new" });
    expect(values(latestCommittedByKey(copy, 0n, 2n))).toEqual({ k: "0:old" });
    expect(compareLatestByKey(latestCommittedByKey(copy, 0n, 2n), theirs, 2n, "t-0", 20)).toEqual([]);
    // Committed below the copy's high watermark, the same difference is one.
    expect(compareLatestByKey(latestCommittedByKey(copy, 0n, 2n), theirs, 3n, "t-0", 20)).toEqual([
      "t-0: key 'k': latest record at offset 0 here, at offset 1 on the source",
    ]);
  });

  it("takes a tombstone on one side and nothing on the other as equal, and a key written again past the copy as lag", () => {
    const at = (offset: bigint, value: string | null) => ({
      offset,
      value: value === null ? null : Buffer.from(value),
    });
    const key = (k: string) => Buffer.from(k).toString("hex");
    const mine = new Map([
      [key("gone"), at(3n, null)],
      [key("lagging"), at(4n, "old")],
      [key("missing"), at(5n, "kept here")],
    ]);
    const theirs = new Map([
      [key("lagging"), at(12n, "new")],
      [key("only-there"), at(6n, "v")],
    ]);
    expect(compareLatestByKey(mine, theirs, 10n, "t-0", 20)).toEqual([
      "t-0: key 'missing': latest record at offset 5 here, none on the source",
      "t-0: key 'only-there': latest record at offset 6 on the source, none here",
    ]);
  });
});
