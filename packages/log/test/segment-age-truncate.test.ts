import { describe, expect, it } from "vitest";
import { ManualClock, MemoryLogStorage, PartitionLog } from "../src/index";
import { dataBatch } from "./helpers";

describe("segment.ms of an older segment that a truncation makes active again", () => {
  it("rolls by its first batch's timestamp, as Kafka's timeWaitedForRoll (loaded lazily from the segment)", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const t0 = clock.now();
    const log = PartitionLog.open(new MemoryLogStorage(), { clock, segmentMs: 10_000 });
    const append = (offset: bigint, ts: number) =>
      log.appendAsFollower(dataBatch({ baseOffset: offset, baseTimestamp: BigInt(ts), leaderEpoch: 0 }));
    append(0n, t0);
    append(1n, t0 + 1_000);
    clock.advance(15_000);
    append(2n, clock.now()); // rolls: segment 2
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 2n]);
    // A follower whose log diverged at offset 1: segment 2 goes, segment 0 (first record at t0) is active again.
    log.truncateTo(1n);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n]);
    // Records 15 s younger than the segment's first: Kafka rolls (15 s >= segment.ms). The log counted the
    // segment as created at the truncation, so it kept appending to a segment already past segment.ms.
    append(1n, clock.now());
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 1n]);
  });
});
