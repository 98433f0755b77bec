import { CorruptRecordError, RecordBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import {
  FencedLeaderEpochError,
  InvalidProducerEpochError,
  InvalidRecordError,
  OffsetOutOfRangeError,
  OutOfOrderSequenceError,
  UnexpectedAppendOffsetError,
} from "../src/index";
import { ABORT, baseOffsets, COMMIT, controlBatch, dataBatch, memoryLog, PID_RESET } from "./helpers";

describe("appendAsLeader", () => {
  it("assigns offsets from the log end and stamps the leader epoch into the stored bytes, CRC still valid", () => {
    const { log } = memoryLog();
    const a = dataBatch({ count: 3 });
    const b = dataBatch({ count: 2 });
    const bBefore = Buffer.from(b);
    expect(log.appendAsLeader(a, 5)).toMatchObject({ firstOffset: 0n, lastOffset: 2n, duplicate: false });
    expect(log.appendAsLeader(b, 5)).toMatchObject({ firstOffset: 3n, lastOffset: 4n });
    const stored = [...log.batches()][1]!;
    expect(stored.baseOffset).toBe(3n);
    expect(stored.partitionLeaderEpoch).toBe(5);
    expect(stored.isValid()).toBe(true);
    // The caller's buffer is not written to (it may be shared, e.g. bytes fetched from another log)...
    expect(b.equals(bBefore)).toBe(true);
    // ...unless it was handed over: then the log keeps and stamps it as it is.
    const c = dataBatch({ count: 1 });
    log.appendAsLeader(c, 5, { transferOwnership: true });
    expect(new RecordBatch(c).baseOffset).toBe(5n);
    const kept = log.read(5n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).recordSlices[0]!;
    expect(kept.buffer === c.buffer && kept.byteOffset === c.byteOffset).toBe(true);
    expect(log.logEndOffset).toBe(6n);
    expect(log.epochEntries()).toEqual([{ epoch: 5, startOffset: 0n }]);
  });

  it("rejects a corrupt batch, a stale leader epoch, control batches from clients and sparse batches", () => {
    const { log } = memoryLog();
    const bad = dataBatch();
    bad[bad.length - 1]! ^= 0xff;
    expect(() => log.appendAsLeader(bad, 0)).toThrow(CorruptRecordError);
    log.appendAsLeader(dataBatch(), 3);
    expect(() => log.appendAsLeader(dataBatch(), 2)).toThrow(FencedLeaderEpochError);
    expect(() => log.appendAsLeader(controlBatch(COMMIT, { pid: 1n, epoch: 0 }), 3)).toThrow(
      InvalidRecordError,
    );
    expect(() => log.appendAsLeader(Buffer.concat([dataBatch(), dataBatch()]), 3)).toThrow(
      InvalidRecordError,
    );
    expect(log.logEndOffset).toBe(1n);
  });

  it("checks idempotent sequences: gap, unknown producer, duplicate of the last five", () => {
    const { log } = memoryLog();
    // A producer the partition has no state for may start at any sequence (Kafka 2.5+, KIP-360).
    expect(log.appendAsLeader(dataBatch({ pid: 8n, seq: 3 }), 0).firstOffset).toBe(0n);
    expect(() => log.appendAsLeader(dataBatch({ pid: 8n, seq: 5 }), 0)).toThrow(OutOfOrderSequenceError);
    log.truncateFullyAndStartAt(0n);
    const offsets = [];
    for (let i = 0; i < 6; i++)
      offsets.push(log.appendAsLeader(dataBatch({ pid: 7n, seq: i * 2, count: 2 }), 0));
    expect(() => log.appendAsLeader(dataBatch({ pid: 7n, seq: 13 }), 0)).toThrow(OutOfOrderSequenceError);
    const err = (() => {
      try {
        log.appendAsLeader(dataBatch({ pid: 7n, seq: 13 }), 0);
      } catch (e) {
        return e as OutOfOrderSequenceError;
      }
    })();
    expect(err?.code).toBe(45);
    // Duplicate of batch #2 (seq 4..5): original offsets back, nothing appended.
    const end = log.logEndOffset;
    expect(log.appendAsLeader(dataBatch({ pid: 7n, seq: 4, count: 2 }), 0)).toMatchObject({
      duplicate: true,
      firstOffset: 4n,
      lastOffset: 5n,
    });
    expect(log.logEndOffset).toBe(end);
    // Batch #0 fell out of the five-batch window: it is out of order now.
    expect(() => log.appendAsLeader(dataBatch({ pid: 7n, seq: 0, count: 2 }), 0)).toThrow(
      OutOfOrderSequenceError,
    );
    expect(log.appendAsLeader(dataBatch({ pid: 7n, seq: 12 }), 0).firstOffset).toBe(12n);
  });

  it("fences older producer epochs and requires sequence 0 for a new epoch", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch({ pid: 1n, epoch: 2, seq: 0 }), 0);
    expect(() => log.appendAsLeader(dataBatch({ pid: 1n, epoch: 1, seq: 1 }), 0)).toThrow(
      InvalidProducerEpochError,
    );
    expect(() => log.appendAsLeader(dataBatch({ pid: 1n, epoch: 3, seq: 1 }), 0)).toThrow(
      OutOfOrderSequenceError,
    );
    log.appendAsLeader(dataBatch({ pid: 1n, epoch: 3, seq: 0 }), 0);
    expect(log.producerStateSnapshot()[0]).toMatchObject({ producerId: 1n, producerEpoch: 3 });
    expect(() =>
      log.appendAsLeader(controlBatch(ABORT, { pid: 1n, epoch: 2 }), 0, { origin: "coordinator" }),
    ).toThrow(InvalidProducerEpochError);
  });
});

describe("transactions", () => {
  it("opens on the first transactional batch, holds the LSO, and closes on COMMIT", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch({ count: 2 }), 0); // 0-1
    log.appendAsLeader(dataBatch({ pid: 9n, seq: 0, txn: true }), 0); // 2
    log.appendAsLeader(dataBatch({ pid: 9n, seq: 1, txn: true }), 0); // 3
    log.updateHighWatermark(4n);
    expect(log.ongoingTransactions()).toEqual([{ producerId: 9n, firstOffset: 2n }]);
    expect(log.lastStableOffset).toBe(2n);
    expect(baseOffsets(log.read(0n, 1 << 20, "read_committed").records)).toEqual([0n]);
    expect(baseOffsets(log.read(0n, 1 << 20, "read_uncommitted").records)).toEqual([0n, 2n, 3n]);
    log.appendAsLeader(controlBatch(COMMIT, { pid: 9n, epoch: 0 }), 0, { origin: "coordinator" }); // 4
    // The marker is not below the high watermark yet: the transaction is still unstable.
    expect(log.lastStableOffset).toBe(2n);
    log.updateHighWatermark(5n);
    expect(log.lastStableOffset).toBe(5n);
    expect(log.abortedTransactions()).toEqual([]);
  });

  it("ABORT records an aborted transaction for read_committed fetches", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch({ pid: 9n, seq: 0, txn: true }), 0); // 0
    log.appendAsLeader(dataBatch({ pid: 8n, seq: 0 }), 0); // 1
    log.appendAsLeader(dataBatch({ pid: 9n, seq: 1, txn: true }), 0); // 2
    log.appendAsLeader(controlBatch(ABORT, { pid: 9n, epoch: 0 }), 0, { origin: "coordinator" }); // 3
    log.appendAsLeader(dataBatch({ count: 1 }), 0); // 4
    log.updateHighWatermark(5n);
    const fetch = log.read(1n, 1 << 20, "read_committed");
    expect(fetch.abortedTransactions).toEqual([{ producerId: 9n, firstOffset: 0n, lastOffset: 3n }]);
    expect(fetch.lastStableOffset).toBe(5n);
    expect(log.read(4n, 1 << 20, "read_committed").abortedTransactions).toEqual([]);
    expect(log.read(1n, 1 << 20, "read_uncommitted").abortedTransactions).toEqual([]);
  });

  it("MIRROR_PID_RESET removes every producer entry; a colliding producer then continues unchecked", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 0 }), 0);
    log.appendAsLeader(dataBatch({ pid: 2n, seq: 0, txn: true }), 0);
    log.appendAsLeader(controlBatch(ABORT, { pid: 2n, epoch: 0 }), 0, { origin: "coordinator" });
    expect(log.producerStateSnapshot()).toHaveLength(2);
    log.appendAsLeader(controlBatch(PID_RESET), 1, { origin: "coordinator" });
    expect(log.producerStateSnapshot()).toEqual([]);
    // A destination producer whose id collides with a source one continues its own sequence: accepted,
    // as Kafka accepts any sequence from a producer it has no state for (the point of the reset).
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 1 }), 1);
    expect(() => log.appendAsLeader(dataBatch({ pid: 1n, seq: 5 }), 1)).toThrow(OutOfOrderSequenceError);
    log.appendAsLeader(dataBatch({ pid: 2n, seq: 0 }), 1);
  });

  it("MIRROR_PID_RESET closes a still-open transaction as aborted (defensive)", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch({ pid: 2n, seq: 0, txn: true }), 0);
    log.appendAsLeader(controlBatch(PID_RESET), 0, { origin: "coordinator" });
    log.updateHighWatermark(log.logEndOffset);
    expect(log.ongoingTransactions()).toEqual([]);
    expect(log.lastStableOffset).toBe(2n);
    expect(log.abortedTransactions()).toEqual([{ producerId: 2n, firstOffset: 0n, lastOffset: 1n }]);
  });
});

describe("appendAsFollower", () => {
  function sourceBatches(): Buffer[] {
    return [
      dataBatch({ baseOffset: 10n, count: 2, leaderEpoch: 3, pid: 4n, seq: 0 }),
      dataBatch({ baseOffset: 20n, count: 1, leaderEpoch: 5, pid: 4n, seq: 2 }),
    ];
  }

  it("keeps offsets, epochs and bytes; allows gaps; updates epochs and producer state", () => {
    const { log } = memoryLog();
    log.truncateFullyAndStartAt(10n);
    const bytes = Buffer.concat(sourceBatches());
    const copy = Buffer.from(bytes);
    expect(log.appendAsFollower(bytes)).toMatchObject({ firstOffset: 10n, lastOffset: 20n, batchCount: 2 });
    expect(bytes.equals(copy)).toBe(true);
    expect(log.logEndOffset).toBe(21n);
    expect(log.epochEntries()).toEqual([
      { epoch: 3, startOffset: 10n },
      { epoch: 5, startOffset: 20n },
    ]);
    expect(log.read(10n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).records.equals(copy)).toBe(
      true,
    );
    expect(log.producerStateSnapshot()[0]?.batchMetadata.map((m) => m.lastSeq)).toEqual([1, 2]);
  });

  it("is all or nothing: a corrupt batch anywhere appends nothing", () => {
    const { log } = memoryLog();
    const [a, b] = sourceBatches();
    b![b!.length - 1]! ^= 1;
    expect(() => log.appendAsFollower(Buffer.concat([a!, b!]))).toThrow(CorruptRecordError);
    expect(log.logEndOffset).toBe(0n);
  });

  it("refuses an offset below the log end, and offsets going backwards", () => {
    const { log } = memoryLog();
    log.appendAsFollower(dataBatch({ baseOffset: 0n, count: 5 }));
    expect(() => log.appendAsFollower(dataBatch({ baseOffset: 3n }))).toThrow(UnexpectedAppendOffsetError);
    const backwards = Buffer.concat([dataBatch({ baseOffset: 8n }), dataBatch({ baseOffset: 6n })]);
    expect(() => log.appendAsFollower(backwards)).toThrow(UnexpectedAppendOffsetError);
    expect(log.logEndOffset).toBe(5n);
  });

  it("ignores a partial trailing batch, as a fetch cut at its byte limit", () => {
    const { log } = memoryLog();
    const a = dataBatch({ baseOffset: 0n });
    const b = dataBatch({ baseOffset: 1n });
    expect(log.appendAsFollower(Buffer.concat([a, b.subarray(0, 30)])).validBytes).toBe(a.length);
    expect(log.logEndOffset).toBe(1n);
  });

  it("processes MIRROR_PID_RESET like the leader", () => {
    const { log } = memoryLog();
    log.appendAsFollower(dataBatch({ baseOffset: 0n, pid: 3n, seq: 0 }));
    log.appendAsFollower(controlBatch(PID_RESET, { baseOffset: 1n }));
    expect(log.producerStateSnapshot()).toEqual([]);
  });
});

describe("read", () => {
  it("returns whole batches up to maxBytes, at least one, and the batch holding a mid-batch offset", () => {
    const { log } = memoryLog();
    for (let i = 0; i < 4; i++) log.appendAsLeader(dataBatch({ count: 3 }), 0);
    log.updateHighWatermark(12n);
    const size = log.read(0n, 1 << 20, "read_uncommitted").records.length / 4;
    expect(baseOffsets(log.read(4n, size * 2, "read_uncommitted").records)).toEqual([3n, 6n]);
    expect(baseOffsets(log.read(4n, 1, "read_uncommitted").records)).toEqual([3n]);
    expect(log.read(4n, 1, "read_uncommitted", { minOneBatch: false }).records.length).toBe(0);
  });

  it("stops at the high watermark for consumers and at the log end for replicas", () => {
    const { log } = memoryLog();
    for (let i = 0; i < 3; i++) log.appendAsLeader(dataBatch(), 0);
    log.updateHighWatermark(1n);
    expect(baseOffsets(log.read(0n, 1 << 20, "read_uncommitted").records)).toEqual([0n]);
    expect(baseOffsets(log.read(1n, 1 << 20, "read_uncommitted").records)).toEqual([]);
    expect(baseOffsets(log.read(0n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).records)).toEqual([
      0n,
      1n,
      2n,
    ]);
    expect(log.read(3n, 100, "read_uncommitted").records.length).toBe(0);
  });

  it("throws OFFSET_OUT_OF_RANGE below the log start and above the log end", () => {
    const { log } = memoryLog();
    log.truncateFullyAndStartAt(5n);
    log.appendAsLeader(dataBatch(), 0);
    expect(() => log.read(4n, 100, "read_uncommitted")).toThrow(OffsetOutOfRangeError);
    expect(() => log.read(7n, 100, "read_uncommitted")).toThrow(OffsetOutOfRangeError);
    try {
      log.read(7n, 100, "read_uncommitted");
    } catch (e) {
      expect((e as OffsetOutOfRangeError).code).toBe(1);
    }
  });
});

describe("truncation", () => {
  it("truncates at batch boundaries, fixes epochs and HW, and rebuilds producer state", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 0, count: 2 }), 1); // 0-1
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 2, count: 3 }), 2); // 2-4
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 5, txn: true }), 3); // 5
    log.updateHighWatermark(6n);
    expect(log.truncateTo(3n)).toBe(true); // mid-batch: the batch at 2 goes whole
    expect(log.logEndOffset).toBe(2n);
    expect(log.highWatermark).toBe(2n);
    expect(log.epochEntries()).toEqual([{ epoch: 1, startOffset: 0n }]);
    expect(log.producerStateSnapshot()[0]?.batchMetadata).toEqual([
      { firstSeq: 0, lastSeq: 1, firstOffset: 0n, lastOffset: 1n },
    ]);
    expect(log.ongoingTransactions()).toEqual([]);
    expect(log.appendAsLeader(dataBatch({ pid: 1n, seq: 2 }), 3).firstOffset).toBe(2n);
    expect(log.truncateTo(10n)).toBe(false);
  });

  it("a new leader's epoch is known before any batch of it: Kafka's endOffsetFor answers", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch({ count: 2 }), 1); // 0-1
    log.appendAsLeader(dataBatch({ count: 3 }), 3); // 2-4
    // Elected at epoch 5 with log end 5 (Partition.makeLeader): no batch of epoch 5 yet.
    expect(log.assignEpochStartOffset(5, log.logEndOffset)).toBe(true);
    expect(log.epochEntries()).toEqual([
      { epoch: 1, startOffset: 0n },
      { epoch: 3, startOffset: 2n },
      { epoch: 5, startOffset: 5n },
    ]);
    // A follower or mirror that fetched epoch 3 learns where it ends, not UNDEFINED.
    expect(log.endOffsetForEpoch(3)).toEqual({ epoch: 3, endOffset: 5n });
    expect(log.endOffsetForEpoch(4)).toEqual({ epoch: 3, endOffset: 5n });
    expect(log.endOffsetForEpoch(5)).toEqual({ epoch: 5, endOffset: 5n });
    // Below the first entry: the requested epoch and the first start offset; above the latest: UNDEFINED.
    expect(log.endOffsetForEpoch(0)).toEqual({ epoch: 0, endOffset: 0n });
    expect(log.endOffsetForEpoch(6)).toEqual({ epoch: -1, endOffset: -1n });
    // A stale (lower) epoch never rewrites the history; the same epoch again changes nothing.
    expect(log.assignEpochStartOffset(4, 5n)).toBe(false);
    expect(log.assignEpochStartOffset(5, 5n)).toBe(false);
    // Batches of the current epoch extend it without a new entry.
    log.appendAsLeader(dataBatch(), 5);
    expect(log.epochEntries().at(-1)).toEqual({ epoch: 5, startOffset: 5n });
  });

  it("a truncation at or past the log end drops an epoch entry no batch reached (Kafka's truncateTo)", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch({ count: 2 }), 1);
    log.assignEpochStartOffset(4, 2n); // led epoch 4, appended nothing, then became a follower
    expect(log.latestEpoch).toBe(4);
    expect(log.truncateTo(2n)).toBe(false);
    expect(log.logEndOffset).toBe(2n);
    expect(log.epochEntries()).toEqual([{ epoch: 1, startOffset: 0n }]);
    expect(log.latestEpoch).toBe(1);
  });

  it("truncateFullyAndStartAt empties everything", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 0 }), 1);
    log.truncateFullyAndStartAt(100n);
    expect([log.logStartOffset, log.logEndOffset, log.highWatermark]).toEqual([100n, 100n, 100n]);
    expect(log.epochEntries()).toEqual([]);
    expect(log.producerStateSnapshot()).toEqual([]);
    expect(log.appendAsLeader(dataBatch(), 2).firstOffset).toBe(100n);
    expect(log.endOffsetForEpoch(2)).toEqual({ epoch: 2, endOffset: 101n });
  });

  it("rolls segments by size and by time", () => {
    const { log, clock } = memoryLog({ segmentBytes: 300, segmentMs: 1000 });
    for (let i = 0; i < 6; i++) log.appendAsLeader(dataBatch({ count: 1 }), 0);
    const bySize = log.segments().length;
    expect(bySize).toBeGreaterThan(1);
    clock.advance(1000);
    log.appendAsLeader(dataBatch(), 0);
    clock.advance(1000);
    log.appendAsLeader(dataBatch(), 0);
    expect(log.segments().length).toBeGreaterThan(bySize);
    expect(log.segments().at(-1)?.baseOffset).toBe(7n);
  });
});
