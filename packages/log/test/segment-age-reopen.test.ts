import { describe, expect, it } from "vitest";
import { ManualClock, MemoryLogStorage, PartitionLog } from "../src/index";
import { dataBatch } from "./helpers";

/**
 * segment.ms of a reopened active segment. Kafka (LogSegment.timeWaitedForRoll) rolls when the appended
 * records' max timestamp minus the segment's first batch's max timestamp (rollingBasedTimestamp) exceeds
 * segment.ms: data time against data time, so records stamped far in the past (a mirror of an old source
 * topic, a backfill) or ahead of the broker's clock (a producer's clock running ahead) roll as their own
 * timestamps say.
 */
const DAY = 24 * 60 * 60 * 1000;

describe("segment.ms of an active segment reopened after a restart", () => {
  it("records stamped long ago (a mirror of an old topic): a restart does not roll at the next append", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const storage = new MemoryLogStorage();
    const old = clock.now() - 30 * DAY; // the source's timestamps, a month old, a second apart
    let log = PartitionLog.open(storage, { clock, segmentMs: 60_000 });
    let offset = 0n;
    const mirrorAppend = (ts: number) => {
      // The mirror's follower path: the source's batches, as they are (offsets and timestamps).
      log.appendAsFollower(dataBatch({ baseOffset: offset, baseTimestamp: BigInt(ts), leaderEpoch: 0 }));
      offset++;
    };
    mirrorAppend(old);
    for (let restart = 1; restart <= 5; restart++) {
      clock.advance(1_000);
      log.close();
      log = PartitionLog.open(storage, { clock, segmentMs: 60_000 }, { highWatermark: offset });
      mirrorAppend(old + restart * 1_000);
    }
    // Six records spanning 5 s of their own time and 5 s of the broker's: Kafka keeps one segment. The
    // reopened segment counted as created a month ago: every restart rolled, one tiny segment each.
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n]);
  });

  it("a backfill producer's old timestamps (leader path): a restart does not roll at the next append", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const storage = new MemoryLogStorage();
    const old = clock.now() - 30 * DAY;
    let log = PartitionLog.open(storage, { clock, segmentMs: 60_000 });
    log.appendAsLeader(dataBatch({ baseTimestamp: BigInt(old) }), 0);
    for (let restart = 1; restart <= 3; restart++) {
      clock.advance(1_000);
      log.close();
      log = PartitionLog.open(storage, { clock, segmentMs: 60_000 }, { highWatermark: log.logEndOffset });
      log.appendAsLeader(dataBatch({ baseTimestamp: BigInt(old + restart * 1_000) }), 0);
    }
    expect(log.segments().length).toBe(1);
  });

  it("records stamped ahead of the broker's clock: restarts more often than segment.ms still roll", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const storage = new MemoryLogStorage();
    const skew = 60 * 60 * 1000; // the producer's clock runs an hour ahead
    let log = PartitionLog.open(storage, { clock, segmentMs: 10_000 });
    log.appendAsLeader(dataBatch({ baseTimestamp: BigInt(clock.now() + skew) }), 0);
    // A restart every 5 s, one record each, for a minute: the first record is 60 s older than the last by
    // both clocks, so Kafka rolled (and retention could delete it). The reopened segment counted as created
    // at each restart (its first timestamp, in the future, was capped at now): it never rolled.
    for (let i = 0; i < 12; i++) {
      clock.advance(5_000);
      log.close();
      log = PartitionLog.open(storage, { clock, segmentMs: 10_000 }, { highWatermark: log.logEndOffset });
      log.appendAsLeader(dataBatch({ baseTimestamp: BigInt(clock.now() + skew) }), 0);
    }
    expect(log.segments().length).toBeGreaterThan(1);
  });

  it("still rolls a reopened segment whose records are older than segment.ms (the commit's case)", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const storage = new MemoryLogStorage();
    let log = PartitionLog.open(storage, { clock, segmentMs: 10_000 });
    log.appendAsLeader(dataBatch({ baseTimestamp: BigInt(clock.now()) }), 0);
    clock.advance(15_000);
    log.close();
    log = PartitionLog.open(storage, { clock, segmentMs: 10_000 }, { highWatermark: log.logEndOffset });
    log.appendAsLeader(dataBatch({ baseTimestamp: BigInt(clock.now()) }), 0);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 1n]);
  });
});
