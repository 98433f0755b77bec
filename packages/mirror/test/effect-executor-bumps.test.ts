import { ClusterError, ManualClock, ManualScheduler } from "@cluster-mirror/cluster";
import type { MirrorPartitionEffect } from "@cluster-mirror/machines";
import { describe, expect, it } from "vitest";
import { flush } from "./core-helpers";
import { executorOver, recordingPartition } from "./executor-helpers";

type BumpRequest = { topic: string; partition: number; minLeaderEpoch: number };
type BumpResult = { leaderEpoch: number; error?: undefined } | { leaderEpoch?: undefined; error: Error };

/** A destination that only answers bumps: each partition's epoch goes to max(current + 1, minimum). */
class BumpingDestination {
  readonly clusterId = "destination";
  readonly batches: BumpRequest[][] = [];
  readonly singles: BumpRequest[][] = [];
  readonly epochs = new Map<string, number>();
  /** Partitions the controller refuses (unknown to it). */
  readonly unknown = new Set<string>();
  /** Requests refused as a whole with NOT_CONTROLLER before the controller answers again. */
  refusals = 0;

  private bump(r: BumpRequest): BumpResult {
    const k = `${r.topic}-${r.partition}`;
    if (this.unknown.has(k)) return { error: new ClusterError("UNKNOWN_TOPIC_OR_PARTITION", `no ${k}`) };
    const epoch = Math.max((this.epochs.get(k) ?? 0) + 1, r.minLeaderEpoch);
    this.epochs.set(k, epoch);
    return { leaderEpoch: epoch };
  }

  bumpLeaderEpochs(requests: BumpRequest[]): number[] {
    this.singles.push(requests);
    return requests.map((r) => {
      const result = this.bump(r);
      if (result.error) throw result.error;
      return result.leaderEpoch;
    });
  }

  bumpLeaderEpochsBatch(requests: readonly BumpRequest[]): BumpResult[] {
    this.batches.push([...requests]);
    if (this.refusals > 0) {
      this.refusals--;
      const error = new ClusterError("NOT_CONTROLLER", "the controller is failing over");
      return requests.map(() => ({ error }));
    }
    return requests.map((r) => this.bump(r));
  }
}

const bump = (minLeaderEpoch: number): MirrorPartitionEffect => ({
  type: "bumpLeaderEpoch",
  params: { stateEpoch: 3, minLeaderEpoch },
});

describe("effect executor: leader epoch bumps", () => {
  it("sends the bumps requested in one task as one BumpLeaderEpochs request, each partition its own epoch", async () => {
    const destination = new BumpingDestination();
    const executor = executorOver(destination);
    const parts = [recordingPartition("a", 0), recordingPartition("a", 1), recordingPartition("b", 0)];
    for (const [i, p] of parts.entries()) executor.run(p.runtime, bump(10 * (i + 1)));
    await flush();
    expect(destination.batches).toEqual([
      [
        { topic: "a", partition: 0, minLeaderEpoch: 10 },
        { topic: "a", partition: 1, minLeaderEpoch: 20 },
        { topic: "b", partition: 0, minLeaderEpoch: 30 },
      ],
    ]);
    expect(destination.singles).toEqual([]);
    expect(parts.map((p) => p.events)).toEqual([
      [{ type: "EPOCH_BUMPED", stateEpoch: 3, leaderEpoch: 10 }],
      [{ type: "EPOCH_BUMPED", stateEpoch: 3, leaderEpoch: 20 }],
      [{ type: "EPOCH_BUMPED", stateEpoch: 3, leaderEpoch: 30 }],
    ]);
  });

  it("a partition the controller refuses fails alone; the others of the request are bumped", async () => {
    const destination = new BumpingDestination();
    destination.unknown.add("a-1");
    const executor = executorOver(destination);
    const [ok, refused] = [recordingPartition("a", 0), recordingPartition("a", 1)];
    executor.run(ok.runtime, bump(5));
    executor.run(refused.runtime, bump(5));
    await flush();
    expect(ok.events).toEqual([{ type: "EPOCH_BUMPED", stateEpoch: 3, leaderEpoch: 5 }]);
    expect(refused.events).toEqual([
      expect.objectContaining({ type: "EFFECT_FAILED", stateEpoch: 3, message: "no a-1", retryable: true }),
    ]);
  });

  it("without a batched request, bumps each partition on its own (one refusal fails only its partition)", async () => {
    const destination = new BumpingDestination();
    destination.unknown.add("a-0");
    const executor = executorOver({
      clusterId: destination.clusterId,
      bumpLeaderEpochs: (requests) => destination.bumpLeaderEpochs(requests),
    });
    const [refused, ok] = [recordingPartition("a", 0), recordingPartition("a", 1)];
    executor.run(refused.runtime, bump(7));
    executor.run(ok.runtime, bump(7));
    await flush();
    expect(destination.singles).toHaveLength(2);
    expect(ok.events).toEqual([{ type: "EPOCH_BUMPED", stateEpoch: 3, leaderEpoch: 7 }]);
    expect(refused.events).toEqual([
      expect.objectContaining({ type: "EFFECT_FAILED", message: "no a-0", retryable: true }),
    ]);
  });

  it("a coordinator that lost its __mirror_state leadership bumps nothing", async () => {
    const destination = new BumpingDestination();
    const executor = executorOver(destination, { stillCoordinator: () => false });
    const p = recordingPartition("a", 0);
    executor.run(p.runtime, bump(5));
    await flush();
    expect(destination.batches).toEqual([]);
    expect(p.events).toEqual([]);
  });

  it("bumps refused with NOT_CONTROLLER are asked again together: one request, not one per partition", async () => {
    const destination = new BumpingDestination();
    destination.refusals = 1;
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const executor = executorOver(destination, { clock, scheduler });
    const parts = [recordingPartition("a", 0), recordingPartition("a", 1), recordingPartition("b", 0)];
    for (const p of parts) executor.run(p.runtime, bump(5));
    await flush();
    expect(destination.batches).toHaveLength(1);
    // As Node's event loop runs timers: each task on its own, its promise continuations before the next.
    while (scheduler.run(1_000, 1) > 0) await flush();
    expect(destination.batches.slice(1)).toEqual([
      [
        { topic: "a", partition: 0, minLeaderEpoch: 5 },
        { topic: "a", partition: 1, minLeaderEpoch: 5 },
        { topic: "b", partition: 0, minLeaderEpoch: 5 },
      ],
    ]);
    expect(parts.map((p) => p.events)).toEqual(
      parts.map(() => [{ type: "EPOCH_BUMPED", stateEpoch: 3, leaderEpoch: 5 }]),
    );
  });

  it("a bump whose partition moved on while it waited for the controller is not asked again", async () => {
    const destination = new BumpingDestination();
    destination.refusals = 1;
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const executor = executorOver(destination, { clock, scheduler });
    const moved = { record: { stateEpoch: 3 }, pending: null };
    const parts = [recordingPartition("a", 0), recordingPartition("a", 1, moved)];
    for (const p of parts) executor.run(p.runtime, bump(5));
    await flush();
    moved.record.stateEpoch = 4; // a STOP (or a failure) committed meanwhile
    while (scheduler.run(1_000, 1) > 0) await flush();
    expect(destination.batches.slice(1)).toEqual([[{ topic: "a", partition: 0, minLeaderEpoch: 5 }]]);
    expect(parts.map((p) => p.events)).toEqual([
      [{ type: "EPOCH_BUMPED", stateEpoch: 3, leaderEpoch: 5 }],
      [],
    ]);
  });
});
