import { ClusterError, ManualClock, ManualScheduler } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { LeaderCatchUps } from "../src/coordinator/leader-catch-ups";
import type { DestinationCluster, FetcherManager, LocalReplica } from "../src/ports";
import { flush } from "./core-helpers";
import { executorOver, recordingPartition } from "./executor-helpers";

/**
 * orders-0 led by broker 1, which the metadata names at epoch 6 while its own replica knows epoch 5 (a
 * lagging leader): it refuses STOPPING's abort step (FENCED_LEADER_EPOCH), and the FAILED that commits
 * (state epoch 4) arms its retry timer, an hour long. `catchUp()` gives its replica the metadata's epoch.
 */
async function failedOnLaggingLeader() {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const leader = { own: 5 };
  const replica = {
    topic: "orders",
    partition: 0,
    leaderEpoch: () => leader.own,
    ongoingTransactions: () => {
      throw new ClusterError("FENCED_LEADER_EPOCH", `broker 1 is not the leader of orders-0 at epoch 6`);
    },
  } as unknown as LocalReplica;
  const destination: Partial<DestinationCluster> = {
    clusterId: "destination",
    leaderOf: () => 1,
    leaderEpochOf: () => 6,
    replica: (brokerId) => (brokerId === 1 ? replica : undefined),
  };
  const leaderCatchUps = new LeaderCatchUps();
  const executor = executorOver(destination, {
    clock,
    scheduler,
    fetchers: (brokerId) => (brokerId === 1 ? ({} as FetcherManager) : undefined),
    leaderCatchUps,
  });
  const context: { record: { stateEpoch: number; state: string }; pending: null } = {
    record: { stateEpoch: 3, state: "STOPPING" },
    pending: null,
  };
  const p = recordingPartition("orders", 0, context);
  executor.run(p.runtime, { type: "abortOpenTransactions", params: { stateEpoch: 3 } });
  await flush();
  expect(p.events.map((e) => e.type)).toEqual(["EFFECT_FAILED"]);
  context.record = { stateEpoch: 4, state: "FAILED" };
  executor.run(p.runtime, {
    type: "scheduleRetry",
    params: { stateEpoch: 4, attempt: 0, delayMs: 3_600_000 },
  });
  const fired = () => p.events.filter((e) => e.type === "RETRY_TIMER_FIRED").length;
  return { executor, scheduler, leaderCatchUps, p, fired, catchUp: () => (leader.own = 6) };
}

describe("effect executor: a FAILED whose step a lagging destination leader refused", () => {
  it("waits for that leader to catch up, counted meanwhile: a retry asked for before that fires nothing", async () => {
    const { executor, scheduler, leaderCatchUps, p, fired, catchUp } = await failedOnLaggingLeader();
    expect(leaderCatchUps.awaited).toBe(true);
    expect(executor.retryNow(p.runtime, "leader")).toBe(false);
    scheduler.run(60_000);
    expect(fired()).toBe(0);

    catchUp();
    expect(executor.retryNow(p.runtime, "leader")).toBe(true);
    scheduler.run(0);
    expect(fired()).toBe(1);
    // Fired: no retry waits for a catch-up any more.
    expect(leaderCatchUps.awaited).toBe(false);
  });

  it("its timer cancelled (a recover, a removal) or fired at the backoff's end: no longer counted", async () => {
    const cancelled = await failedOnLaggingLeader();
    cancelled.executor.run(cancelled.p.runtime, { type: "cancelRetryTimer", params: { stateEpoch: 4 } });
    expect(cancelled.leaderCatchUps.awaited).toBe(false);

    const waited = await failedOnLaggingLeader();
    waited.scheduler.run(3_600_000);
    expect(waited.fired()).toBe(1);
    expect(waited.leaderCatchUps.awaited).toBe(false);
  });
});
