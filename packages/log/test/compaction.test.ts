import {
  CompressionType,
  compressionCodecsLoaded,
  decodeRecords,
  loadCompressionCodecs,
  RecordBatch,
  RecordBatchLayout,
} from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import type { PartitionLog } from "../src/index";
import { ABORT, COMMIT, controlBatch, dataBatch, memoryLog } from "./helpers";

/** key -> value of every record left in the log (null = tombstone), plus the offsets of the batches. */
function contents(log: PartitionLog): { kv: Map<string, string | null>; offsets: bigint[] } {
  const kv = new Map<string, string | null>();
  const offsets: bigint[] = [];
  for (const b of log.batches()) {
    offsets.push(b.baseOffset);
    if (b.isControl) continue;
    for (const r of decodeRecords(b)) if (r.key) kv.set(r.key.toString(), r.value?.toString() ?? null);
  }
  return { kv, offsets };
}

function compactedLog(): { log: PartitionLog; clock: { advance(ms: number): void } } {
  return memoryLog({ cleanupPolicy: "compact", segmentBytes: 200, deleteRetentionMs: 1000 });
}

describe("compaction", () => {
  it("keeps the latest value per key and preserves offsets (gaps, lastOffsetDelta)", () => {
    const { log } = compactedLog();
    log.appendAsLeader(dataBatch({ keys: ["a", "b"], values: ["1", "1"] }), 0); // 0-1
    log.appendAsLeader(dataBatch({ keys: ["a"], values: ["2"] }), 0); // 2
    log.appendAsLeader(dataBatch({ keys: ["b", "c"], values: ["2", "1"] }), 0); // 3-4
    log.appendAsLeader(dataBatch({ keys: ["z"] }), 0); // 5 (active)
    log.updateHighWatermark(log.logEndOffset);
    const stats = log.compact();
    expect(stats.segmentsCleaned).toBeGreaterThan(0);
    const { kv } = contents(log);
    expect(kv).toEqual(
      new Map([
        ["a", "2"],
        ["b", "2"],
        ["c", "1"],
        ["z", "v0"],
      ]),
    );
    const first = [...log.batches()][0]!;
    expect(first.baseOffset).toBe(0n);
    expect(first.lastOffset).toBe(1n);
    // "a"@0 is superseded inside the cleanable range; "b"@1 is only superseded in the active segment.
    expect(decodeRecords(first).map((r) => [r.key?.toString(), r.offsetDelta])).toEqual([["b", 1]]);
    expect(log.logEndOffset).toBe(6n);
    expect(() => log.read(1n, 1 << 20, "read_uncommitted")).not.toThrow();
  });

  it("removes tombstones only after delete.retention.ms (KIP-534 delete horizon)", () => {
    const { log, clock } = compactedLog();
    log.appendAsLeader(dataBatch({ keys: ["a"], values: ["1"] }), 0);
    log.appendAsLeader(dataBatch({ keys: ["a"], values: [null] }), 0);
    log.appendAsLeader(dataBatch({ keys: ["x", "y", "z"] }), 0);
    log.appendAsLeader(dataBatch({ keys: ["w"] }), 0);
    log.updateHighWatermark(log.logEndOffset);
    log.compact();
    expect(contents(log).kv.get("a")).toBeNull();
    const tomb = [...log.batches()].find((b) => b.baseOffset === 1n)!;
    expect(tomb.hasDeleteHorizon).toBe(true);
    expect(tomb.maxTimestamp).toBe(1000n);
    expect(decodeRecords(tomb)[0]!.timestampDelta + tomb.baseTimestamp).toBe(1000n);
    clock.advance(999);
    log.compact();
    expect(contents(log).kv.has("a")).toBe(true);
    clock.advance(1);
    log.compact();
    expect(contents(log).kv.has("a")).toBe(false);
  });

  it("drops aborted transactional data, keeps markers and each producer's last batch (empty)", () => {
    const { log } = compactedLog();
    log.appendAsLeader(dataBatch({ pid: 5n, seq: 0, txn: true, keys: ["k"], values: ["aborted"] }), 0); // 0
    log.appendAsLeader(controlBatch(ABORT, { pid: 5n, epoch: 0 }), 0, { origin: "coordinator" }); // 1
    log.appendAsLeader(dataBatch({ pid: 6n, seq: 0, txn: true, keys: ["k"], values: ["committed"] }), 0); // 2
    log.appendAsLeader(controlBatch(COMMIT, { pid: 6n, epoch: 0 }), 0, { origin: "coordinator" }); // 3
    log.appendAsLeader(dataBatch({ keys: ["q"] }), 0); // 4
    log.appendAsLeader(dataBatch({ keys: ["r"] }), 0); // 5
    log.updateHighWatermark(log.logEndOffset);
    const producersBefore = log
      .producerStateSnapshot()
      .map((p) => [p.producerId, p.producerEpoch, p.batchMetadata.at(-1)]);
    log.compact();
    const batches = [...log.batches()];
    const aborted = batches.find((b) => b.baseOffset === 0n)!;
    expect(aborted.recordCount).toBe(0); // retained empty: it carries producer 5's last sequence
    expect(batches.filter((b) => b.isControl).map((b) => b.baseOffset)).toEqual([1n, 3n]);
    expect(contents(log).kv.get("k")).toBe("committed");
    expect(
      log.producerStateSnapshot().map((p) => [p.producerId, p.producerEpoch, p.batchMetadata.at(-1)]),
    ).toEqual(producersBefore);
    expect(new RecordBatch(aborted.buffer).isValid()).toBe(true);
  });

  it("never touches the active segment or data above the LSO, and does nothing for delete-policy logs", () => {
    const { log } = compactedLog();
    log.appendAsLeader(dataBatch({ keys: ["a"], values: ["1"] }), 0);
    log.appendAsLeader(dataBatch({ keys: ["a"], values: ["2"] }), 0);
    expect(log.compact().segmentsCleaned).toBe(0); // HW = 0: nothing stable
    const plain = memoryLog({ segmentBytes: 100 }).log;
    plain.appendAsLeader(dataBatch({ keys: ["a"] }), 0);
    plain.appendAsLeader(dataBatch({ keys: ["a"] }), 0);
    plain.updateHighWatermark(2n);
    expect(plain.compact().segmentsCleaned).toBe(0);
  });
});

describe("min.compaction.lag.ms", () => {
  it("leaves segments holding records younger than the lag, and what follows them, uncompacted", () => {
    const lag = 60_000;
    const { log, clock } = memoryLog({
      cleanupPolicy: "compact",
      segmentBytes: 1, // a segment per batch
      minCompactionLagMs: lag,
    });
    const at = (ms: number) => BigInt(ms);
    const start = clock.now();
    log.appendAsLeader(dataBatch({ keys: ["a"], values: ["1"], baseTimestamp: at(start - 2 * lag) }), 0); // 0
    log.appendAsLeader(dataBatch({ keys: ["a"], values: ["2"], baseTimestamp: at(start - 2 * lag) }), 0); // 1
    log.appendAsLeader(dataBatch({ keys: ["b", "c", "d"], baseTimestamp: at(start - 2 * lag) }), 0); // 2-4
    log.appendAsLeader(dataBatch({ keys: ["b"], values: ["2"], baseTimestamp: at(start) }), 0); // 5
    log.appendAsLeader(dataBatch({ keys: ["c"], values: ["2"], baseTimestamp: at(start) }), 0); // 6
    log.appendAsLeader(dataBatch({ keys: ["e", "f", "g"], baseTimestamp: at(start) }), 0); // 7-9
    log.appendAsLeader(dataBatch({ keys: ["z"], baseTimestamp: at(start) }), 0); // 10 (active)
    log.updateHighWatermark(log.logEndOffset);
    const bases = log.segments().map((s) => s.baseOffset);
    expect(bases).toEqual([0n, 1n, 2n, 5n, 6n, 7n, 10n]);
    // Segments 0 to 2 are older than the lag; 5 is not: it bounds the cleanable range.
    expect(log.compact().cleanableEndOffset).toBe(5n);
    let kv = contents(log).kv;
    expect([...log.batches()].map((b) => b.baseOffset)).toEqual([1n, 2n, 5n, 6n, 7n, 10n]); // a@0 superseded
    expect([kv.get("b"), kv.get("c")]).toEqual(["2", "2"]);
    // b@2 and c@3 stay: their newer values are in a segment still within the lag.
    expect(decodeRecords([...log.batches()][1]!).map((r) => r.key?.toString())).toEqual(["b", "c", "d"]);
    clock.advance(lag + 10); // past the lag of every record (a batch's records are stamped 1 ms apart)
    expect(log.compact().cleanableEndOffset).toBe(10n);
    kv = contents(log).kv;
    expect(decodeRecords([...log.batches()][1]!).map((r) => r.key?.toString())).toEqual(["d"]);
    expect([kv.get("b"), kv.get("c")]).toEqual(["2", "2"]);
  });
});

describe("compaction of compressed batches", () => {
  /** Three segments of one batch each, all compressed with `codec`, keys a, a, b; plus an active one. */
  function compressedLog(codec: CompressionType): PartitionLog {
    const { log } = compactedLog();
    log.appendAsLeader(dataBatch({ keys: ["a", "x"], values: ["1", "1"], compression: codec }), 0); // 0-1
    log.appendAsLeader(dataBatch({ keys: ["a"], values: ["2"], compression: codec }), 0); // 2
    log.appendAsLeader(dataBatch({ keys: ["b"], values: ["1"], compression: codec }), 0); // 3
    log.appendAsLeader(dataBatch({ keys: ["z"] }), 0); // 4 (active)
    log.updateHighWatermark(log.logEndOffset);
    return log;
  }

  /**
   * A zstd batch written without the zstd module (which this test must not load yet): the records section
   * as one zstd frame of a single raw (stored) block, which is valid zstd.
   */
  function zstdBatchWithoutCodec(keys: string[], values: string[]): Buffer {
    const plain = new RecordBatch(dataBatch({ keys, values }));
    const section = plain.recordsBytes;
    expect(section.length).toBeLessThan(256);
    const frame = Buffer.alloc(4 + 1 + 1 + 3 + section.length);
    frame.writeUInt32LE(0xfd2fb528, 0); // magic
    frame[4] = 0x20; // single segment, 1-byte frame content size
    frame[5] = section.length;
    frame.writeUIntLE(1 | (section.length << 3), 6, 3); // last block, raw, size
    section.copy(frame, 9);
    const out = Buffer.concat([plain.buffer.subarray(0, RecordBatchLayout.RECORD_BATCH_OVERHEAD), frame]);
    out.writeInt32BE(out.length - RecordBatchLayout.LOG_OVERHEAD, RecordBatchLayout.BATCH_LENGTH_OFFSET);
    out.writeInt16BE(plain.attributes | CompressionType.ZSTD, RecordBatchLayout.ATTRIBUTES_OFFSET);
    out.writeUInt32BE(new RecordBatch(out).computeCrc(), RecordBatchLayout.CRC_OFFSET);
    return out;
  }

  it("leaves a batch whose codec is not loaded (zstd before loadCompressionCodecs) as it is", () => {
    expect(compressionCodecsLoaded()).toBe(false);
    const { log } = compactedLog();
    log.appendAsLeader(zstdBatchWithoutCodec(["a", "x"], ["1", "1"]), 0); // 0-1
    log.appendAsLeader(dataBatch({ keys: ["a"], values: ["2"] }), 0); // 2: supersedes a@0 (not rewritten)
    log.appendAsLeader(zstdBatchWithoutCodec(["b"], ["1"]), 0); // 3
    log.appendAsLeader(dataBatch({ keys: ["b"], values: ["2"] }), 0); // 4: supersedes b@3
    log.appendAsLeader(dataBatch({ keys: ["z"] }), 0); // 5 (active)
    log.updateHighWatermark(log.logEndOffset);
    const before = [...log.batches()].map((b) => Buffer.from(b.buffer));
    const stats = log.compact();
    expect(stats.segmentsCleaned).toBe(0);
    expect([...log.batches()].map((b) => b.buffer)).toEqual(before);
    expect(log.batches().next().value?.compression).toBe(CompressionType.ZSTD);
  });

  it("does not drop an expired tombstone while a batch it cannot read (zstd not loaded) may hold an older value", () => {
    expect(compressionCodecsLoaded()).toBe(false);
    const { log, clock } = compactedLog();
    log.appendAsLeader(zstdBatchWithoutCodec(["a"], ["old"]), 0); // 0: a=old, unreadable here
    log.appendAsLeader(dataBatch({ keys: ["a"], values: [null] }), 0); // 1: tombstone of a
    log.appendAsLeader(dataBatch({ keys: ["x", "y", "z"] }), 0); // 2-4
    log.appendAsLeader(dataBatch({ keys: ["w"] }), 0); // 5 (active)
    log.updateHighWatermark(log.logEndOffset);
    const tombstone = () => [...log.batches()].find((b) => b.baseOffset === 1n);
    log.compact();
    expect(tombstone()?.hasDeleteHorizon).toBe(true);
    clock.advance(1000); // past the delete horizon
    log.compact();
    // Dropping the tombstone now would bring a=old (offset 0, left as it is) back to life.
    expect(log.batches().next().value?.compression).toBe(CompressionType.ZSTD);
    expect(tombstone()?.recordCount).toBe(1);
    expect(decodeRecords(tombstone()!).map((r) => [r.key?.toString(), r.value])).toEqual([["a", null]]);
  });

  it("leaves a batch whose records section is malformed (CRC valid) as it is, and cleans the rest", () => {
    // The leader path checks the CRC and the header, not the records: a client can store such a batch, and
    // the mirror copies what its source holds. Compaction threw on it at every pass (and the broker's
    // cleaner pass with it, leaving later partitions uncompacted and undeleted).
    const garbled = Buffer.from(dataBatch({ keys: ["b"], values: ["old"] }));
    garbled.fill(0xff, RecordBatchLayout.RECORD_BATCH_OVERHEAD + 1);
    garbled.writeUInt32BE(new RecordBatch(garbled).computeCrc(), RecordBatchLayout.CRC_OFFSET);
    const { log, clock } = compactedLog();
    log.appendAsLeader(garbled, 0); // 0: unreadable
    log.appendAsLeader(dataBatch({ keys: ["a"], values: ["1"] }), 0); // 1
    log.appendAsLeader(dataBatch({ keys: ["a", "b"], values: ["2", null] }), 0); // 2-3
    log.appendAsLeader(dataBatch({ keys: ["x", "y", "z"] }), 0); // 4-6
    log.appendAsLeader(dataBatch({ keys: ["w"] }), 0); // 7 (active)
    log.updateHighWatermark(log.logEndOffset);
    expect(log.segments().length).toBeGreaterThan(2);
    const stored = Buffer.from(log.batches().next().value!.buffer);
    expect(() => log.compact()).not.toThrow();
    clock.advance(1000); // past the tombstone's delete horizon
    expect(() => log.compact()).not.toThrow();
    const batches = [...log.batches()];
    expect(batches[0]!.buffer).toEqual(stored);
    expect(batches.map((b) => b.baseOffset)).toEqual([0n, 2n, 4n, 7n]); // a@1 superseded
    // b's tombstone stays: the unreadable batch may hold an older b.
    expect(decodeRecords(batches[1]!).map((r) => [r.key?.toString(), r.value?.toString() ?? null])).toEqual([
      ["a", "2"],
      ["b", null],
    ]);
  });

  it.each([
    ["gzip", CompressionType.GZIP],
    ["snappy", CompressionType.SNAPPY],
    ["lz4", CompressionType.LZ4],
    ["zstd", CompressionType.ZSTD],
  ] as const)("rewrites %s batches with their own codec, offsets kept", async (_name, codec) => {
    await loadCompressionCodecs();
    const log = compressedLog(codec);
    const stats = log.compact();
    expect(stats.segmentsCleaned).toBe(1);
    expect(stats.recordsRemoved).toBe(1);
    const first = [...log.batches()][0]!;
    expect(first.compression).toBe(codec);
    expect(first.isValid()).toBe(true);
    expect([first.baseOffset, first.lastOffset]).toEqual([0n, 1n]);
    expect(decodeRecords(first).map((r) => [r.key?.toString(), r.offsetDelta])).toEqual([["x", 1]]);
    expect(contents(log).kv).toEqual(
      new Map([
        ["a", "2"],
        ["x", "1"],
        ["b", "1"],
        ["z", "v0"],
      ]),
    );
  });
});
