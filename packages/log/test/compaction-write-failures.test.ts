import { decodeRecords, recordBatches } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { KafkaStorageError, ManualClock, MemoryLogStorage, PartitionLog } from "../src/index";
import { dataBatch } from "./helpers";

/** Memory storage whose segment rewrites fail after `rewritesLeft` more, as a disk filling up mid-pass. */
class FillingStorage extends MemoryLogStorage {
  rewritesLeft = Number.POSITIVE_INFINITY;
  override replaceSegment(baseOffset: bigint, bytes: Buffer): void {
    if (this.rewritesLeft <= 0)
      throw new KafkaStorageError(`rewrite of segment ${baseOffset} failed: ENOSPC`);
    this.rewritesLeft--;
    super.replaceSegment(baseOffset, bytes);
  }
}

/** key=value of every record a read_uncommitted fetch returns from the log start, batch by batch. */
function readAll(log: PartitionLog): string[] {
  const out: string[] = [];
  let offset = log.logStartOffset;
  while (offset < log.highWatermark) {
    const data = log.read(offset, 1 << 20, "read_uncommitted");
    if (data.sizeInBytes === 0) break;
    for (const slice of data.recordSlices) {
      for (const batch of recordBatches(slice)) {
        batch.validate();
        for (const r of decodeRecords(batch)) out.push(`${r.key}=${r.value}`);
        offset = batch.lastOffset + 1n;
      }
    }
  }
  return out;
}

describe("a compaction pass whose segment rewrites fail part way (a disk filling up)", () => {
  it("leaves the log readable and equal to the log reopened from its storage", () => {
    const storage = new FillingStorage();
    const config = { clock: new ManualClock(0), cleanupPolicy: "compact" as const, segmentBytes: 150 };
    const log = PartitionLog.open(storage, config);
    // Two batches a segment: "a" and "b" are written three times, then an active segment with "z".
    for (const v of ["1", "2", "3"]) {
      log.appendAsLeader(dataBatch({ keys: ["a"], values: [v] }), 0);
      log.appendAsLeader(dataBatch({ keys: ["b"], values: [v] }), 0);
    }
    log.appendAsLeader(dataBatch({ keys: ["z"], values: ["1"] }), 0);
    log.updateHighWatermark(log.logEndOffset);
    expect(log.segments().length).toBeGreaterThanOrEqual(4);
    // The first segment's rewrite lands; the second's fails.
    storage.rewritesLeft = 1;
    expect(() => log.compact()).toThrow(KafkaStorageError);
    const reopened = PartitionLog.open(storage, config, { highWatermark: log.highWatermark });
    expect(readAll(log)).toEqual(readAll(reopened));
    expect(log.logStartOffset).toBe(reopened.logStartOffset);
    expect(log.logEndOffset).toBe(reopened.logEndOffset);
    // The next pass (the disk has room again) finishes the job.
    storage.rewritesLeft = Number.POSITIVE_INFINITY;
    log.compact();
    expect(readAll(log)).toEqual(["a=3", "b=3", "z=1"]);
  });
});
