import { ManualClock } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { isThrottledReplica, ReplicationQuota } from "../src/fetcher/replication-quota";

describe("ReplicationQuota measures as Kafka's ReplicationQuotaManager (SimpleRate)", () => {
  // Kafka's ReplicationQuotaManagerTest.shouldExceedQuotaThenReturnBackBelowBoundAsTimePasses: 10 windows
  // of 1 s, a quota of 100 B/s, the first check at 0 ms.
  it("divides by the time since the oldest sample started, at least one window", () => {
    const clock = new ManualClock(0);
    const quota = new ReplicationQuota(clock, { numWindows: 10, windowMs: 1000 });
    expect(quota.isQuotaExceeded(100)).toBe(false);
    clock.advance(1500);
    quota.record(1);
    expect(quota.isQuotaExceeded(100)).toBe(false);
    quota.record(149); // 150 B over 1.5 s: at the quota, not above it
    expect(quota.isQuotaExceeded(100)).toBe(false);
    quota.record(1);
    expect(quota.rate()).toBeCloseTo(151 / 1.5, 9);
    expect(quota.isQuotaExceeded(100)).toBe(true);
    clock.advance(500);
    expect(quota.isQuotaExceeded(100)).toBe(false);
    expect(quota.rate()).toBeCloseTo(151 / 2, 9);
    clock.advance(500);
    quota.record(99);
    expect(quota.rate()).toBeCloseTo(250 / 2.5, 9);
    expect(quota.isQuotaExceeded(100)).toBe(false);
    quota.record(1);
    expect(quota.isQuotaExceeded(100)).toBe(true);
    expect(quota.rate()).toBeCloseTo(251 / 2.5, 9);
    clock.advance(2000);
    expect(quota.isQuotaExceeded(100)).toBe(false);
    expect(quota.rate()).toBeCloseTo(251 / 4.5, 9);
  });

  it("throttles a burst in its first window, not only after ten times the rate", () => {
    const clock = new ManualClock(0);
    const quota = new ReplicationQuota(clock);
    expect(quota.isQuotaExceeded(1000)).toBe(false);
    quota.record(5000);
    expect(quota.isQuotaExceeded(1000)).toBe(true);
    clock.advance(4000); // 5000 B over 4 s
    expect(quota.isQuotaExceeded(1000)).toBe(true);
    clock.advance(1000); // over 5 s: at the quota
    expect(quota.isQuotaExceeded(1000)).toBe(false);
    // Bytes fetched but not recorded yet count when asked for.
    expect(quota.isQuotaExceeded(1000, 1)).toBe(true);
  });

  it("forgets samples without events for numWindows windows, and starts measuring again from then", () => {
    const clock = new ManualClock(0);
    const quota = new ReplicationQuota(clock);
    quota.record(5000);
    clock.advance(10_999);
    expect(quota.rate()).toBeCloseTo(5000 / 10.999, 9);
    clock.advance(1);
    expect(quota.rate()).toBe(0);
    quota.record(500);
    expect(quota.isQuotaExceeded(1000)).toBe(false);
    quota.record(501); // 1001 B, and the span starts over: one window
    expect(quota.isQuotaExceeded(1000)).toBe(true);
  });
});

describe("mirror.replication.throttled.replicas is read as Kafka's ConfigHandler reads it", () => {
  it("takes '*', or partition:broker pairs by number, with spaces around the entries", () => {
    expect(isThrottledReplica(" * ", 7, 3)).toBe(true);
    expect(isThrottledReplica("0:1, 3:1", 3, 1)).toBe(true);
    expect(isThrottledReplica("00:01", 0, 1)).toBe(true);
    expect(isThrottledReplica("10:1", 1, 1)).toBe(false);
    expect(isThrottledReplica("1:10", 1, 1)).toBe(false);
    expect(isThrottledReplica("3:2", 3, 1)).toBe(false);
    expect(isThrottledReplica("", 0, 0)).toBe(false);
    expect(isThrottledReplica(undefined, 0, 0)).toBe(false);
  });
});
