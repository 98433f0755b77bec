import { describe, expect, it } from "vitest";
import { ClientQuotaManager, ManualClock } from "../src/index";

describe("ClientQuotaManager", () => {
  it("answers 0 within quota and a throttle time proportional to the excess above it", () => {
    const clock = new ManualClock(1_000_000);
    const q = new ClientQuotaManager({ clock });
    q.setQuota("fetch", "mirror-m1-broker-0-fetcher-0", 1000);
    expect(q.record("fetch", "mirror-m1-broker-0-fetcher-0", 5000)).toBe(0);
    // 20,000 bytes over a 10 s span = 2,000 B/s, twice the quota: wait one more span.
    const throttle = q.record("fetch", "mirror-m1-broker-0-fetcher-0", 15000);
    expect(throttle).toBe(10_000);
    expect(q.record("fetch", "other-client", 1_000_000)).toBe(0);
  });

  it("forgets old windows and applies a default quota and run-time changes", () => {
    const clock = new ManualClock(0);
    const q = new ClientQuotaManager({ clock, numWindows: 3, windowMs: 1000 });
    q.setQuota("produce", "", 100);
    expect(q.record("produce", "a", 1000)).toBeGreaterThan(0);
    clock.advance(5000);
    expect(q.record("produce", "a", 100)).toBe(0);
    q.setQuota("produce", "a", 10);
    expect(q.record("produce", "a", 100)).toBeGreaterThan(0);
    q.setQuota("produce", "a", undefined);
    expect(q.quotaFor("produce", "a")).toBe(100);
    expect(() => q.setQuota("produce", "a", 0)).toThrow(RangeError);
  });

  it("caps what one fetch may take to the quota's windows (Kafka's getMaxValueInQuotaWindow)", () => {
    const clock = new ManualClock(0);
    expect(new ClientQuotaManager({ clock }).maxValueInQuotaWindow("fetch", "a")).toBe(Infinity);
    const q = new ClientQuotaManager({ clock });
    q.setQuota("fetch", "a", 1000);
    expect(q.maxValueInQuotaWindow("fetch", "a")).toBe(10_000);
    const short = new ClientQuotaManager({ clock, numWindows: 3, windowMs: 500 });
    short.setQuota("fetch", "", 1000);
    expect(short.maxValueInQuotaWindow("fetch", "b")).toBe(1000);
  });

  it("takes back bytes of a throttled fetch answered without them (Kafka's unrecordQuotaSensor)", () => {
    const clock = new ManualClock(0);
    const q = new ClientQuotaManager({ clock });
    q.setQuota("fetch", "a", 1000);
    expect(q.record("fetch", "a", 5000)).toBe(0);
    expect(q.record("fetch", "a", 15_000)).toBe(10_000);
    q.unrecord("fetch", "a", 15_000);
    // 10,000 bytes over the 10 s span: at the quota again.
    expect(q.record("fetch", "a", 5000)).toBe(0);
  });
});
