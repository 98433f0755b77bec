import { describe, expect, it } from "vitest";
import { dataBatch, memoryLog } from "./helpers";

describe("delete.retention.ms at its largest allowed value", () => {
  it("compaction keeps tombstones (forever) instead of failing on a delete horizon past int64", () => {
    // 9223372036854775807 is a valid delete.retention.ms (a long, at least 0); a topic config change now
    // reaches open logs, so an alter to it applies at the next cleaner pass.
    const { log } = memoryLog({
      cleanupPolicy: "compact",
      segmentBytes: 200,
      deleteRetentionMs: Number("9223372036854775807"),
    });
    log.appendAsLeader(dataBatch({ keys: ["a"], values: ["1"] }), 0);
    log.appendAsLeader(dataBatch({ keys: ["a"], values: [null] }), 0);
    for (let i = 0; i < 4; i++) log.appendAsLeader(dataBatch({ keys: [`z${i}`] }), 0);
    log.updateHighWatermark(log.logEndOffset);
    expect(log.segments().length).toBeGreaterThan(2);
    expect(() => log.compact()).not.toThrow();
    const tombstones = [...log.batches()].filter((b) => b.baseOffset === 1n);
    expect(tombstones.length).toBe(1);
  });
});
