import { describe, expect, it } from "vitest";
import { InvalidProducerEpochError, OutOfOrderSequenceError, type PartitionLog } from "../src/index";
import { ABORT, controlBatch, dataBatch, memoryLog } from "./helpers";

/** Five one-record batches of producer 0 (sequences 0..4) then one of producer 1, in 100-byte segments. */
function fiveAndOne(): PartitionLog {
  const { log } = memoryLog({ segmentBytes: 100 });
  for (let seq = 0; seq < 5; seq++) log.appendAsLeader(dataBatch({ pid: 0n, seq }), 0);
  log.appendAsLeader(dataBatch({ pid: 1n, seq: 0 }), 0);
  log.updateHighWatermark(log.logEndOffset);
  return log;
}

describe("producer state when the log start moves (Kafka's onLogStartOffsetIncremented)", () => {
  it("DeleteRecords past every batch of a producer keeps it: its next send continues its sequence", () => {
    const log = fiveAndOne();
    log.deleteRecordsBefore(5n);
    expect(log.segments()[0]!.baseOffset).toBe(5n);
    expect(log.producerStateSnapshot().map((p) => p.producerId)).toEqual([0n, 1n]);
    // A gap is still one, and a retry of a deleted batch is still recognised as a duplicate.
    expect(() => log.appendAsLeader(dataBatch({ pid: 0n, seq: 7 }), 0)).toThrow(OutOfOrderSequenceError);
    expect(log.appendAsLeader(dataBatch({ pid: 0n, seq: 4 }), 0)).toMatchObject({
      duplicate: true,
      firstOffset: 4n,
    });
    expect(log.appendAsLeader(dataBatch({ pid: 0n, seq: 5 }), 0)).toMatchObject({
      duplicate: false,
      firstOffset: 6n,
    });
  });

  it("retention keeps the producers of the segments it deletes, through a later truncation too", () => {
    const log = fiveAndOne();
    const result = log.applyRetention({ retentionBytes: 0 });
    expect(result.logStartOffset).toBe(5n);
    log.appendAsLeader(dataBatch({ pid: 0n, seq: 5 }), 0);
    log.appendAsLeader(dataBatch({ pid: 0n, seq: 6 }), 0);
    // The truncation restores state from before the two appends: producer 0 is still known.
    log.truncateTo(6n);
    expect(log.producerStateSnapshot()[0]?.batchMetadata.at(-1)?.lastSeq).toBe(4);
    expect(() => log.appendAsLeader(dataBatch({ pid: 0n, seq: 8 }), 0)).toThrow(OutOfOrderSequenceError);
    expect(log.appendAsLeader(dataBatch({ pid: 0n, seq: 5 }), 0).firstOffset).toBe(6n);
  });

  it("a producer fenced before its batches were deleted stays fenced", () => {
    const { log } = memoryLog({ segmentBytes: 100 });
    log.appendAsLeader(dataBatch({ pid: 3n, epoch: 4, seq: 0, txn: true }), 0);
    log.appendAsLeader(controlBatch(ABORT, { pid: 3n, epoch: 4 }), 0, { origin: "coordinator" });
    log.appendAsLeader(dataBatch({ count: 1 }), 0);
    log.updateHighWatermark(log.logEndOffset);
    log.deleteRecordsBefore(2n);
    expect(log.logStartOffset).toBe(2n);
    expect(() => log.appendAsLeader(dataBatch({ pid: 3n, epoch: 3, seq: 1 }), 0)).toThrow(
      InvalidProducerEpochError,
    );
    // A new epoch must start at sequence 0 (the entry has an epoch).
    expect(() => log.appendAsLeader(dataBatch({ pid: 3n, epoch: 5, seq: 2 }), 0)).toThrow(
      OutOfOrderSequenceError,
    );
  });
});

describe("sequence checks for a producer without an epoch (Kafka's checkSequence)", () => {
  it("an entry with no producer epoch (-1) accepts any sequence, in any epoch", () => {
    const { log } = memoryLog();
    // Replicated as it came: the entry gets NO_PRODUCER_EPOCH.
    log.appendAsFollower(dataBatch({ pid: 4n, epoch: -1, seq: 0 }));
    expect(log.producerStateSnapshot()[0]?.producerEpoch).toBe(-1);
    expect(log.appendAsLeader(dataBatch({ pid: 4n, epoch: 0, seq: 9 }), 0).firstOffset).toBe(1n);
    // Now it has an epoch: the usual rules apply again.
    expect(() => log.appendAsLeader(dataBatch({ pid: 4n, epoch: 0, seq: 11 }), 0)).toThrow(
      OutOfOrderSequenceError,
    );
  });
});
