import { describe, expect, it } from "vitest";
import { ABORT, controlBatch, dataBatch, memoryLog, PID_RESET } from "./helpers";

describe("PartitionLog.hasDataBatchAbove", () => {
  it("tells data written above an epoch from the control batches written there", () => {
    const { log } = memoryLog();
    expect(log.hasDataBatchAbove(-1)).toBe(false);
    // Mirrored data at epochs 0 and 2 (the LME is 2); the failover's markers and PID reset at epoch 3.
    log.appendAsLeader(dataBatch(), 0);
    log.appendAsLeader(dataBatch(), 2);
    log.appendAsLeader(controlBatch(ABORT, { pid: 5n, epoch: 0 }), 3, { origin: "coordinator" });
    log.appendAsLeader(controlBatch(PID_RESET), 3, { origin: "coordinator" });
    expect(log.hasDataBatchAbove(2)).toBe(false);
    expect(log.hasDataBatchAbove(1)).toBe(true);
    // A local producer writes at epoch 3, then a transaction marker follows.
    log.appendAsLeader(dataBatch(), 3);
    log.appendAsLeader(controlBatch(ABORT, { pid: 6n, epoch: 0 }), 3, { origin: "coordinator" });
    expect(log.hasDataBatchAbove(2)).toBe(true);
    expect(log.hasDataBatchAbove(3)).toBe(false);
  });
});
