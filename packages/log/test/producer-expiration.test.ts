import { afterEach, describe, expect, it } from "vitest";
import { FileLogStorage, ManualClock, OutOfOrderSequenceError, PartitionLog } from "../src/index";
import { dataBatch, memoryLog, removeDir, tempDir } from "./helpers";

/** producer.id.expiration.ms in these tests. */
const EXPIRATION = 60_000;
/** The clock `memoryLog` starts at; batches are stamped with it. */
const START = 1_000_000;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

/** A batch of producer `pid` stamped at `at` (ms). */
function sent(pid: bigint, seq: number, at: number, txn = false): Buffer {
  return dataBatch({ pid, seq, txn, baseTimestamp: BigInt(at) });
}

describe("producer.id.expiration.ms (Kafka's ProducerStateManager.removeExpiredProducers)", () => {
  it("forgets a producer idle that long, keeps a recent one and one with an open transaction", () => {
    const { log, clock } = memoryLog({ producerIdExpirationMs: EXPIRATION });
    log.appendAsLeader(sent(1n, 0, START), 0);
    log.appendAsLeader(sent(2n, 0, START, true), 0);
    clock.advance(EXPIRATION - 1000);
    log.appendAsLeader(sent(3n, 0, START + EXPIRATION - 1000), 0);
    expect(log.removeExpiredProducers()).toBe(0);
    clock.advance(1000);
    expect(log.removeExpiredProducers()).toBe(1);
    expect(log.producerStateSnapshot().map((p) => p.producerId)).toEqual([2n, 3n]);
    // A producer the partition has no state for continues at any sequence (Kafka's checkSequence).
    expect(log.appendAsLeader(sent(1n, 7, START + EXPIRATION), 0).duplicate).toBe(false);
    expect(() => log.appendAsLeader(sent(3n, 7, START + EXPIRATION), 0)).toThrow(OutOfOrderSequenceError);
  });

  it("an expired producer does not come back from the state a truncation restores", () => {
    const { log, clock } = memoryLog({ producerIdExpirationMs: EXPIRATION, segmentBytes: 100 });
    log.appendAsLeader(sent(1n, 0, START), 0); // segment 0
    clock.advance(EXPIRATION);
    log.appendAsLeader(sent(2n, 0, START + EXPIRATION), 0); // rolls: checkpoint at 1 holds producer 1
    log.appendAsLeader(sent(2n, 1, START + EXPIRATION), 0);
    log.removeExpiredProducers();
    expect(log.producerStateSnapshot().map((p) => p.producerId)).toEqual([2n]);
    log.truncateTo(2n);
    expect(log.producerStateSnapshot().map((p) => p.producerId)).toEqual([2n]);
  });

  it("a reopened file log loads no producer its snapshot holds that expired meanwhile", () => {
    const dir = tempDir();
    dirs.push(dir);
    const clock = new ManualClock(START);
    const config = { clock, segmentBytes: 100, producerIdExpirationMs: EXPIRATION };
    const open = () => PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), config);
    const log = open();
    log.appendAsLeader(sent(1n, 0, START), 0);
    clock.advance(1000);
    log.appendAsLeader(sent(2n, 0, START + 1000), 0);
    log.appendAsLeader(sent(3n, 0, START + 1000), 0);
    log.updateHighWatermark(log.logEndOffset);
    log.applyRetention({ retentionBytes: 0 }); // producers 1 and 2 live on in the snapshot only
    log.close();
    clock.set(START + EXPIRATION);
    const again = open();
    expect(again.producerStateSnapshot().map((p) => p.producerId)).toEqual([2n, 3n]);
    again.close();
  });
});
