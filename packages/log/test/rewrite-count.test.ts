import { describe, expect, it } from "vitest";
import { dataBatch, memoryLog } from "./helpers";

describe("PartitionLog.rewriteCount", () => {
  it("counts compaction passes that rewrote segments and truncations, not appends or a log start moving up", () => {
    const { log } = memoryLog({ cleanupPolicy: "compact", segmentBytes: 200 });
    for (const value of ["1", "2", "3", "4"])
      log.appendAsLeader(dataBatch({ keys: ["a"], values: [value] }), 0);
    log.updateHighWatermark(log.logEndOffset);
    expect(log.rewriteCount).toBe(0);

    log.deleteRecordsBefore(1n); // DeleteRecords: the log start says what went
    expect(log.rewriteCount).toBe(0);

    expect(log.compact().segmentsCleaned).toBeGreaterThan(0);
    expect(log.rewriteCount).toBe(1);

    expect(log.truncateTo(log.logEndOffset)).toBe(false); // nothing removed
    expect(log.rewriteCount).toBe(1);
    expect(log.truncateTo(log.logEndOffset - 1n)).toBe(true);
    expect(log.rewriteCount).toBe(2);
    log.truncateFullyAndStartAt(10n);
    expect(log.rewriteCount).toBe(3);
  });

  it("truncationCount counts the truncations alone: a compaction pass leaves it as it is", () => {
    const { log } = memoryLog({ cleanupPolicy: "compact", segmentBytes: 200 });
    for (const value of ["1", "2", "3", "4"])
      log.appendAsLeader(dataBatch({ keys: ["a"], values: [value] }), 0);
    log.updateHighWatermark(log.logEndOffset);
    log.deleteRecordsBefore(1n);
    expect(log.compact().segmentsCleaned).toBeGreaterThan(0);
    expect([log.rewriteCount, log.truncationCount]).toEqual([1, 0]);

    expect(log.truncateTo(log.logEndOffset)).toBe(false); // nothing removed
    expect(log.truncationCount).toBe(0);
    expect(log.truncateTo(log.logEndOffset - 1n)).toBe(true);
    expect([log.rewriteCount, log.truncationCount]).toEqual([2, 1]);
    log.truncateFullyAndStartAt(10n);
    expect([log.rewriteCount, log.truncationCount]).toEqual([3, 2]);
  });
});
