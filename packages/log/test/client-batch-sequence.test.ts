import { describe, expect, it } from "vitest";
import { InvalidRecordError } from "../src/index";
import { dataBatch, memoryLog } from "./helpers";

/**
 * Kafka's LogValidator.validateBatch: a client batch that carries a producer id must carry a sequence
 * (INVALID_RECORD otherwise). Taken, it would skip the sequence and duplicate checks of an idempotent
 * producer and could open a transaction on its producer id.
 */
describe("a client batch with a producer id and no sequence", () => {
  it("is refused with INVALID_RECORD, leaving the producer state as it was", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch({ pid: 7n, seq: 0, count: 2 }), 0);
    const before = log.producerStateSnapshot();
    const end = log.logEndOffset;

    let refused: unknown;
    try {
      log.appendAsLeader(dataBatch({ pid: 7n, seq: -1 }), 0);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(InvalidRecordError);
    expect((refused as InvalidRecordError).code).toBe(87);
    expect((refused as Error).message).toMatch(/producer 7.*sequence -1/);
    expect(() => log.appendAsLeader(dataBatch({ pid: 9n, seq: -1, txn: true }), 0)).toThrow(
      InvalidRecordError,
    );

    expect(log.logEndOffset).toBe(end);
    expect(log.producerStateSnapshot()).toEqual(before);
    expect(log.ongoingTransactions()).toEqual([]);
    // The producer goes on where it was: its next sequence is still 2.
    expect(log.appendAsLeader(dataBatch({ pid: 7n, seq: 2 }), 0)).toMatchObject({ firstOffset: end });
  });

  it("is taken as it comes from replication (a follower's or the mirror's append)", () => {
    const { log } = memoryLog();
    log.appendAsFollower(dataBatch({ pid: 7n, seq: -1, baseOffset: 0n }));
    expect(log.logEndOffset).toBe(1n);
  });
});
