import { ManualClock, ManualScheduler } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import type { RefreshReport } from "../src/metadata/mirror-metadata-manager";
import { SyncWaiters } from "../src/metadata/sync-waiters";

function report(mirror: string, leader: boolean): RefreshReport {
  return {
    mirror,
    leader,
    deletedTopics: [],
    createdTopics: [],
    skippedTopics: [],
    createdPartitions: [],
    alteredConfigs: [],
    commands: [],
    errors: [],
  };
}

describe("SyncWaiters", () => {
  it("counts only a leader's refresh that started after the wait began", async () => {
    const clock = new ManualClock(0);
    const waiters = new SyncWaiters(new ManualScheduler(clock), () => ["m1"]);
    const startedBefore = waiters.refreshStarted("m1");
    let resolved: RefreshReport | undefined;
    void waiters.next("m1", 60_000).then((r) => {
      resolved = r;
    });
    // A refresh begun before the call may have read the source before the caller's change.
    startedBefore(report("m1", true));
    await Promise.resolve();
    expect(resolved).toBeUndefined();
    // A follower's refresh (it only checked the cluster id) is not a full sync either.
    waiters.refreshStarted("m1")(report("m1", false));
    // Nor another mirror's.
    waiters.refreshStarted("m2")(report("m2", true));
    await Promise.resolve();
    expect(resolved).toBeUndefined();
    const full = report("m1", true);
    waiters.refreshStarted("m1")(full);
    await Promise.resolve();
    expect(resolved).toBe(full);
  });

  it("rejects with UNKNOWN_MIRROR when the mirror is deleted, REQUEST_TIMED_OUT after the timeout", async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const waiters = new SyncWaiters(scheduler, () => []);
    const deleted = waiters.next("m1", 60_000);
    waiters.refreshStarted("m1")(undefined);
    await expect(deleted).rejects.toMatchObject({ errorName: "UNKNOWN_MIRROR" });
    const late = waiters.next("m1", 1_000);
    let settled = false;
    late
      .catch(() => {})
      .finally(() => {
        settled = true;
      });
    scheduler.run(999);
    await Promise.resolve();
    expect(settled).toBe(false);
    scheduler.run(1);
    await expect(late).rejects.toMatchObject({ errorName: "REQUEST_TIMED_OUT" });
  });
});
