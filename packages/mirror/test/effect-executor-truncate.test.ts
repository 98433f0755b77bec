import { ManualScheduler, ManualClock as SchedulerClock, SeededRandom } from "@cluster-mirror/cluster";
import { ManualClock, MemoryLogStorage, PartitionLog } from "@cluster-mirror/log";
import type { MirrorPartitionEvent } from "@cluster-mirror/machines";
import { encodeRecordBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { EffectExecutor } from "../src/coordinator/effect-executor";
import { type MirrorPartitionRef, PartitionRuntime } from "../src/coordinator/partition-runtime";
import type { StateWriteBatcher } from "../src/coordinator/state-write-batcher";
import type { DestinationCluster, LocalReplica, SourceCluster } from "../src/ports";
import { flush } from "./core-helpers";

/** A batch of `count` records at `baseOffset`, written at partition leader epoch `epoch`. */
function batchAt(baseOffset: bigint, epoch: number, count = 1): Buffer {
  return encodeRecordBatch({
    baseOffset,
    partitionLeaderEpoch: epoch,
    baseTimestamp: 1_700_000_000_000n,
    records: Array.from({ length: count }, (_, i) => ({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: 0n,
      key: null,
      value: Buffer.from(`v${i}`),
      headers: [],
    })),
  });
}

/** The destination's leader replica over a real in-memory log (only what truncateToEpoch uses). */
function replicaOver(log: PartitionLog): LocalReplica {
  return {
    topic: "orders",
    partition: 0,
    logEndOffset: () => log.logEndOffset,
    endOffsetForEpoch: (epoch: number) => log.endOffsetForEpoch(epoch),
    truncateTo: (offset: bigint) => {
      log.truncateTo(offset);
    },
  } as unknown as LocalReplica;
}

/** A partition handle whose actor records the events it is sent (state epoch 3). */
function partition(): { runtime: PartitionRuntime; events: MirrorPartitionEvent[] } {
  const key = { mirror: "m", topic: "orders", topicId: "AAAAAAAAAAAAAAAAAAAAAA", partition: 0 };
  const runtime = new PartitionRuntime("m/orders/0", key);
  const events: MirrorPartitionEvent[] = [];
  const snapshot = { status: "active", context: { record: { stateEpoch: 3 }, pending: null } };
  runtime.attach({
    id: runtime.id,
    send: (e: MirrorPartitionEvent) => events.push(e),
    getSnapshot: () => snapshot,
  } as unknown as MirrorPartitionRef);
  return { runtime, events };
}

function executorOver(replica: LocalReplica, source: Partial<SourceCluster>): EffectExecutor {
  const clock = new SchedulerClock(0);
  const destination = {
    clusterId: "destination",
    leaderOf: () => 0,
    replica: () => replica,
  } as unknown as DestinationCluster;
  return new EffectExecutor({
    brokerId: 0,
    destination,
    sources: () => source as SourceCluster,
    sourceClusterId: () => "source",
    fetchers: () => {
      throw new Error("no fetchers in this test");
    },
    clock,
    random: new SeededRandom(1),
    scheduler: new ManualScheduler(clock),
    writer: {} as StateWriteBatcher,
    isrPollIntervalMs: 100,
    stillCoordinator: () => true,
    onLastMirrorEpochCommitted: () => {},
  });
}

describe("effect executor: PREPARING's truncation to the LME", () => {
  it("at the log end still drops the epochs the topic's leaders recorded while it was writable", async () => {
    // The topic was a primary (failed over): it wrote two batches at epoch 1, then a leader election
    // recorded epoch 2 at the log end with no batch in it. The other side mirrored both batches and failed
    // over with LME 1; failing back aligns to LME 1, whose end here is the log end: nothing to cut.
    const log = PartitionLog.open(new MemoryLogStorage(), { clock: new ManualClock(0) });
    log.appendAsIs(batchAt(0n, 1));
    log.appendAsIs(batchAt(1n, 1));
    log.assignEpochStartOffset(2, log.logEndOffset);
    expect(log.latestEpoch).toBe(2);
    const source = {
      endOffsetForEpoch: async () => ({ leaderEpoch: 1, endOffset: 2n }),
    };
    const executor = executorOver(replicaOver(log), source);
    const p = partition();
    executor.run(p.runtime, { type: "truncateToEpoch", params: { stateEpoch: 3, lme: 1 } });
    await flush();
    expect(p.events).toEqual([{ type: "TRUNCATED", stateEpoch: 3 }]);
    // Nothing mirrored was cut, and epoch 2 is gone: the fetcher's lastFetchedEpoch and the LME of a
    // failover before the first fetch read 1, the epoch of the last batch held, not 2.
    expect(log.logEndOffset).toBe(2n);
    expect(log.latestEpoch).toBe(1);
    expect(log.epochEntries()).toEqual([{ epoch: 1, startOffset: 0n }]);
  });

  it("below the log end cuts to where the source's copy of the epoch ends", async () => {
    const log = PartitionLog.open(new MemoryLogStorage(), { clock: new ManualClock(0) });
    for (let o = 0n; o < 4n; o++) log.appendAsIs(batchAt(o, 1));
    const executor = executorOver(replicaOver(log), {
      endOffsetForEpoch: async () => ({ leaderEpoch: 1, endOffset: 3n }),
    });
    const p = partition();
    executor.run(p.runtime, { type: "truncateToEpoch", params: { stateEpoch: 3, lme: 1 } });
    await flush();
    expect(p.events).toEqual([{ type: "TRUNCATED", stateEpoch: 3 }]);
    expect(log.logEndOffset).toBe(3n);
  });
});
