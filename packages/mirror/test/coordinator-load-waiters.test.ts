import { ManualClock, ManualScheduler } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import {
  type CoordinatorLoadStatus,
  CoordinatorLoadWaiters,
} from "../src/coordinator/coordinator-load-waiters";
import type { MirrorPartitionKey } from "../src/ports";

const keys: MirrorPartitionKey[] = [0, 1, 2, 3].map((partition) => ({
  mirror: "m",
  topic: "t",
  topicId: "00000000-0000-0000-0000-000000000001",
  partition,
}));

/** A view where `__mirror_state-1` (keys 1 and 3) is loading until `loaded` is set; counts key lookups. */
function view() {
  const v = {
    loaded: false,
    lookups: 0,
    statusOf(key: MirrorPartitionKey): CoordinatorLoadStatus {
      v.lookups++;
      const statePartition = key.partition % 2;
      return { statePartition, state: statePartition === 1 && !v.loaded ? "LOADING" : "ACTIVE" };
    },
    allActive: () => v.loaded,
  };
  return v;
}

describe("CoordinatorLoadWaiters", () => {
  it("looks at no key when every coordinator is ACTIVE", async () => {
    const v = view();
    v.loaded = true;
    const waiters = new CoordinatorLoadWaiters(v, new ManualScheduler(new ManualClock(0)));
    await waiters.whenLoaded(keys, 1000);
    expect(v.lookups).toBe(0);
  });

  it("while one loads, waits for its keys and names it on timeout", async () => {
    const v = view();
    const scheduler = new ManualScheduler(new ManualClock(0));
    const waiters = new CoordinatorLoadWaiters(v, scheduler);
    const waiting = waiters.whenLoaded(keys, 1000);
    let done = false;
    void waiting.then(() => {
      done = true;
    });
    waiters.changed();
    await Promise.resolve();
    expect(done).toBe(false);
    v.loaded = true;
    waiters.changed();
    await waiting;

    const late = view();
    const timedOut = new CoordinatorLoadWaiters(late, scheduler).whenLoaded(keys, 1000);
    scheduler.run(1000);
    await expect(timedOut).rejects.toThrow(/__mirror_state-1 LOADING/);
  });
});
