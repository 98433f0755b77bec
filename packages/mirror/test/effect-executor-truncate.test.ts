import { ManualClock, MemoryLogStorage, PartitionLog } from "@cluster-mirror/log";
import { describe, expect, it } from "vitest";
import { type MirrorPartitionRef, PartitionRuntime } from "../src/coordinator/partition-runtime";
import type { DestinationCluster, LocalReplica } from "../src/ports";
import { flush } from "./core-helpers";
import { executorOver, recordingPartition } from "./executor-helpers";
import { recordsBatch } from "./meta-helpers";

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

/** A destination whose data partition is led by `replica`. */
function destinationOf(replica: LocalReplica): Partial<DestinationCluster> {
  return { clusterId: "destination", leaderOf: () => 0, leaderEpochOf: () => 0, replica: () => replica };
}

describe("effect executor: PREPARING's truncation to the LME", () => {
  it("at the log end still drops the epochs the topic's leaders recorded while it was writable", async () => {
    // The topic was a primary (failed over): it wrote two batches at epoch 1, then a leader election
    // recorded epoch 2 at the log end with no batch in it. The other side mirrored both batches and failed
    // over with LME 1; failing back aligns to LME 1, whose end here is the log end: nothing to cut.
    const log = PartitionLog.open(new MemoryLogStorage(), { clock: new ManualClock(0) });
    log.appendAsIs(recordsBatch(0n, 1, 1));
    log.appendAsIs(recordsBatch(1n, 1, 1));
    log.assignEpochStartOffset(2, log.logEndOffset);
    expect(log.latestEpoch).toBe(2);
    const source = {
      endOffsetForEpoch: async () => ({ leaderEpoch: 1, endOffset: 2n }),
    };
    const executor = executorOver(destinationOf(replicaOver(log)), { source });
    const p = recordingPartition("orders", 0);
    executor.run(p.runtime, { type: "truncateToEpoch", params: { stateEpoch: 3, lme: 1 } });
    await flush();
    expect(p.events).toEqual([{ type: "TRUNCATED", stateEpoch: 3 }]);
    // Nothing mirrored was cut, and epoch 2 is gone: the fetcher's lastFetchedEpoch and the LME of a
    // failover before the first fetch read 1, the epoch of the last batch held, not 2.
    expect(log.logEndOffset).toBe(2n);
    expect(log.latestEpoch).toBe(1);
    expect(log.epochEntries()).toEqual([{ epoch: 1, startOffset: 0n }]);
  });

  it("holds a removal that arrives right after the cut until the partition learnt of the truncation", async () => {
    // A STOP queued right after the cut (here: on the next microtask, before TRUNCATED, which the executor
    // delivers a few microtasks later) must reach the partition only after TRUNCATED: else its failover takes
    // the log for the topic's own (untruncated) one, writes no markers, and the source's transactions the cut
    // reopened hang.
    const log = PartitionLog.open(new MemoryLogStorage(), { clock: new ManualClock(0) });
    for (let o = 0n; o < 4n; o++) log.appendAsIs(recordsBatch(o, 1, 1));
    const runtime = new PartitionRuntime("m/orders/0", {
      mirror: "m",
      topic: "orders",
      topicId: "AAAAAAAAAAAAAAAAAAAAAA",
      partition: 0,
    });
    const received: string[] = [];
    const snapshot = {
      status: "active",
      context: { record: { stateEpoch: 3 }, pending: null },
      can: () => true,
    };
    runtime.attach({
      id: runtime.id,
      send: (e: { type: string }) => received.push(e.type),
      getSnapshot: () => snapshot,
    } as unknown as MirrorPartitionRef);
    const replica = replicaOver(log);
    const cut = replica.truncateTo.bind(replica);
    let stop: Promise<void> | undefined;
    replica.truncateTo = (offset: bigint) => {
      cut(offset);
      queueMicrotask(() => {
        stop = runtime.command({ type: "STOP" });
      });
    };
    const executor = executorOver(destinationOf(replica), {
      source: { endOffsetForEpoch: async () => ({ leaderEpoch: 1, endOffset: 3n }) },
    });
    executor.run(runtime, { type: "truncateToEpoch", params: { stateEpoch: 3, lme: 1 } });
    await flush();
    expect(log.logEndOffset).toBe(3n);
    expect(received).toEqual(["TRUNCATED", "STOP"]);
    await stop;
  });

  it("below the log end cuts to where the source's copy of the epoch ends", async () => {
    const log = PartitionLog.open(new MemoryLogStorage(), { clock: new ManualClock(0) });
    for (let o = 0n; o < 4n; o++) log.appendAsIs(recordsBatch(o, 1, 1));
    const executor = executorOver(destinationOf(replicaOver(log)), {
      source: { endOffsetForEpoch: async () => ({ leaderEpoch: 1, endOffset: 3n }) },
    });
    const p = recordingPartition("orders", 0);
    executor.run(p.runtime, { type: "truncateToEpoch", params: { stateEpoch: 3, lme: 1 } });
    await flush();
    expect(p.events).toEqual([{ type: "TRUNCATED", stateEpoch: 3 }]);
    expect(log.logEndOffset).toBe(3n);
  });
});
