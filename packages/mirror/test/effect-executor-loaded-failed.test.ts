import { ManualClock, ManualScheduler } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { FaultEndsWhileLoading } from "../src/coordinator/fault-ends-while-loading";
import type { DestinationCluster, FetcherManager, LocalReplica } from "../src/ports";
import { executorOver, recordingPartition } from "./executor-helpers";

const HOUR = 3_600_000;

/**
 * orders-0 FAILED at state epoch 4, as a coordinator loaded it (`loadedStateEpoch`, when given) or committed
 * it (none) with no cause known, its retry timer an hour long. As the timer is armed, the destination's
 * controller is active (`controller`), orders-0 led by a running broker 1 (`leader`, -1: none), its source
 * answered the last refresh (`sourceDown`), and `ended` says what came back while the shard loaded; each
 * can change afterwards.
 */
function failedAtEpoch4(options: {
  loadedStateEpoch?: number;
  controller?: boolean;
  leader?: number;
  sourceDown?: boolean;
  ended?: "controller" | "source";
}) {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const now = {
    controller: options.controller ?? true,
    leader: options.leader ?? 1,
    sourceDown: options.sourceDown ?? false,
  };
  const destination: Partial<DestinationCluster> = {
    clusterId: "destination",
    controllerActive: () => now.controller,
    leaderOf: () => now.leader,
    leaderEpochOf: () => 7,
    replica: (brokerId) => (brokerId === now.leader ? ({} as LocalReplica) : undefined),
  };
  const endedWhileLoading = new FaultEndsWhileLoading();
  if (options.ended === "controller") endedWhileLoading.controllerBack();
  if (options.ended === "source") endedWhileLoading.sourceBack("m");
  const executor = executorOver(destination, {
    clock,
    scheduler,
    fetchers: (brokerId) => (brokerId >= 0 ? ({} as FetcherManager) : undefined),
    sourceDown: () => now.sourceDown,
    endedWhileLoading,
  });
  const context = { record: { stateEpoch: 4, state: "FAILED" }, pending: null };
  const p = recordingPartition("orders", 0, context, options.loadedStateEpoch);
  executor.run(p.runtime, { type: "scheduleRetry", params: { stateEpoch: 4, attempt: 0, delayMs: HOUR } });
  const fired = () => p.events.filter((e) => e.type === "RETRY_TIMER_FIRED").length;
  return { executor, scheduler, now, p, fired };
}

/** Whether the retry timer fires before its hour is up. */
function firesEarly({ scheduler, fired }: ReturnType<typeof failedAtEpoch4>): boolean {
  scheduler.run(HOUR - 1);
  return fired() > 0;
}

describe("effect executor: a FAILED this coordinator loaded (what it waits out was known only before)", () => {
  it("retries at once as it loads when the controller or its source came back while the shard loaded", () => {
    for (const ended of ["controller", "source"] as const) {
      const loaded = failedAtEpoch4({ loadedStateEpoch: 4, ended });
      loaded.scheduler.run(0);
      expect(loaded.fired()).toBe(1);
    }
    // Committed here (what it waits out was known then): its backoff, as before.
    expect(firesEarly(failedAtEpoch4({ ended: "controller" }))).toBe(false);
    // Loaded, nothing came back meanwhile: its backoff.
    expect(firesEarly(failedAtEpoch4({ loadedStateEpoch: 4 }))).toBe(false);
  });

  it("not when what came back is gone again, or its partition has no running leader: that retry would fail at once", () => {
    expect(firesEarly(failedAtEpoch4({ loadedStateEpoch: 4, ended: "controller", controller: false }))).toBe(
      false,
    );
    expect(firesEarly(failedAtEpoch4({ loadedStateEpoch: 4, ended: "source", sourceDown: true }))).toBe(
      false,
    );
    expect(firesEarly(failedAtEpoch4({ loadedStateEpoch: 4, ended: "controller", leader: -1 }))).toBe(false);
  });

  it("loaded at an older state epoch than its FAILED (one this coordinator committed since): its backoff", () => {
    const failed = failedAtEpoch4({ loadedStateEpoch: 2 });
    expect(failed.executor.retryNow(failed.p.runtime, "controller")).toBe(false);
    expect(firesEarly(failed)).toBe(false);
  });

  it("the first return of the controller or its source retries it, once; a leader elected (a rolling restart) does not", () => {
    for (const first of ["controller", "source"] as const) {
      const { executor, scheduler, p, fired } = failedAtEpoch4({ loadedStateEpoch: 4 });
      scheduler.run(60_000);
      expect(executor.retryNow(p.runtime, "leader")).toBe(false);
      scheduler.run(60_000);
      expect(fired()).toBe(0);

      expect(executor.retryNow(p.runtime, first)).toBe(true);
      // More ends before it runs (a flapping controller) bring no other retry.
      expect(executor.retryNow(p.runtime, "controller")).toBe(true);
      expect(executor.retryNow(p.runtime, "source")).toBe(true);
      scheduler.run(0);
      expect(fired()).toBe(1);
      scheduler.run(HOUR);
      expect(fired()).toBe(1);
      // Fired: nothing left to bring forward.
      expect(executor.retryNow(p.runtime, "controller")).toBe(false);
    }
  });

  it("no running leader as it loaded: a leader elected retries it, once", () => {
    const { executor, scheduler, now, p, fired } = failedAtEpoch4({ loadedStateEpoch: 4, leader: -1 });
    scheduler.run(60_000);
    expect(fired()).toBe(0);
    now.leader = 2;
    expect(executor.retryNow(p.runtime, "leader")).toBe(true);
    expect(executor.retryNow(p.runtime, "leader")).toBe(true);
    scheduler.run(HOUR);
    expect(fired()).toBe(1);
  });

  it("the controller or its source back while its partition has no running leader: no retry (it would fail at once), a leader elected retries it", () => {
    // None as it loaded.
    const leaderless = failedAtEpoch4({ loadedStateEpoch: 4, leader: -1 });
    expect(leaderless.executor.retryNow(leaderless.p.runtime, "controller")).toBe(false);
    expect(leaderless.executor.retryNow(leaderless.p.runtime, "source")).toBe(false);
    leaderless.scheduler.run(60_000);
    expect(leaderless.fired()).toBe(0);
    leaderless.now.leader = 2;
    expect(leaderless.executor.retryNow(leaderless.p.runtime, "leader")).toBe(true);
    leaderless.scheduler.run(0);
    expect(leaderless.fired()).toBe(1);

    // Led as it loaded, its leader lost since: it waits for the next one.
    const lost = failedAtEpoch4({ loadedStateEpoch: 4 });
    lost.now.leader = -1;
    expect(lost.executor.retryNow(lost.p.runtime, "controller")).toBe(false);
    lost.scheduler.run(60_000);
    expect(lost.fired()).toBe(0);
    lost.now.leader = 2;
    expect(lost.executor.retryNow(lost.p.runtime, "leader")).toBe(true);
    lost.scheduler.run(0);
    expect(lost.fired()).toBe(1);
    // Its backoff still stands when no leader comes: it fires once, at its hour.
    const never = failedAtEpoch4({ loadedStateEpoch: 4, leader: -1 });
    expect(never.executor.retryNow(never.p.runtime, "controller")).toBe(false);
    never.scheduler.run(HOUR - 1);
    expect(never.fired()).toBe(0);
    never.scheduler.run(1);
    expect(never.fired()).toBe(1);
  });

  it("a removal (its timer cancelled) or the shard unloading while it waits: no retry", () => {
    const removed = failedAtEpoch4({ loadedStateEpoch: 4 });
    removed.executor.run(removed.p.runtime, { type: "cancelRetryTimer", params: { stateEpoch: 4 } });
    expect(removed.executor.retryNow(removed.p.runtime, "controller")).toBe(false);
    removed.scheduler.run(HOUR);
    expect(removed.fired()).toBe(0);

    const unloaded = failedAtEpoch4({ loadedStateEpoch: 4 });
    unloaded.executor.cancelAll();
    expect(unloaded.executor.retryNow(unloaded.p.runtime, "controller")).toBe(false);
    unloaded.scheduler.run(HOUR);
    expect(unloaded.fired()).toBe(0);
  });
});
