import { ControlRecordType, controlTypeOf, RecordBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import type { DestinationCluster, LocalReplica } from "../src/ports";
import { flush } from "./core-helpers";
import { executorOver, recordingPartition } from "./executor-helpers";

type Producer = { producerId: bigint; producerEpoch: number };

/**
 * A destination whose orders-0 leader holds `open` transactions open (an ABORT marker closes one), and
 * whose transaction coordinators answer `live` (the port left out when `live` is "no port").
 */
function destination(open: Producer[], live: Producer[] | undefined | "no port") {
  const stillOpen = open.map((t) => ({ ...t, firstOffset: 0n }));
  const aborted: Producer[] = [];
  const replicated: bigint[] = [];
  const replica = {
    topic: "orders",
    partition: 0,
    ongoingTransactions: () => stillOpen.map((t) => ({ ...t })),
    logEndOffset: () => BigInt(10 + aborted.length),
    awaitReplicated: async (offset: bigint) => {
      replicated.push(offset);
    },
    appendControlBatch: (buffer: Buffer) => {
      const batch = new RecordBatch(buffer);
      expect(controlTypeOf(batch)).toBe(ControlRecordType.ABORT);
      aborted.push({ producerId: batch.producerId, producerEpoch: batch.producerEpoch });
      const i = stillOpen.findIndex((t) => t.producerId === batch.producerId);
      if (i >= 0) stillOpen.splice(i, 1);
    },
  } as unknown as LocalReplica;
  const dest: Partial<DestinationCluster> = {
    clusterId: "destination",
    leaderOf: () => 0,
    leaderEpochOf: () => 0,
    replica: () => replica,
    ...(live === "no port" ? {} : { liveTransactions: () => live }),
  };
  return { dest, aborted, replicated };
}

async function abortHanging(dest: Partial<DestinationCluster>) {
  const p = recordingPartition("orders", 0);
  executorOver(dest).run(p.runtime, { type: "abortHangingTransactions", params: { stateEpoch: 3 } });
  await flush();
  return p.events;
}

describe("effect executor: abortHangingTransactions (KIP-664) aborts only what no coordinator will end", () => {
  const source = { producerId: 7n, producerEpoch: 2 }; // reopened by a cut: no coordinator here runs it
  const local = { producerId: 9n, producerEpoch: 0 }; // ongoing at the local transaction coordinator

  it("writes an ABORT marker, at its epoch, for each hanging transaction and none for a live one", async () => {
    const { dest, aborted, replicated } = destination([source, local], [local]);
    expect(await abortHanging(dest)).toEqual([{ type: "TXNS_ABORTED", stateEpoch: 3 }]);
    expect(aborted).toEqual([source]);
    // Reported once the in-sync replicas have the log end (the marker): a leader lost right after
    // STOPPED cannot take them with it.
    expect(replicated).toEqual([10n]);
  });

  it("a replica that does not acknowledge the markers: fails retriably, not TXNS_ABORTED", async () => {
    const { dest } = destination([source], []);
    const replica = dest.replica!(0, "orders", 0) as unknown as { awaitReplicated: () => Promise<void> };
    replica.awaitReplicated = () =>
      Promise.reject(new Error("leader lost before its followers had the marker"));
    const events = await abortHanging(dest);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "EFFECT_FAILED", stateEpoch: 3, retryable: true });
  });

  it("counts a live transaction at a later epoch of the producer (its marker ends the open one)", async () => {
    const { dest, aborted } = destination([source], [{ producerId: 7n, producerEpoch: 3 }]);
    await abortHanging(dest);
    expect(aborted).toEqual([]);
  });

  it("does not count the producer's earlier epoch as live", async () => {
    const { dest, aborted } = destination([source], [{ producerId: 7n, producerEpoch: 1 }]);
    await abortHanging(dest);
    expect(aborted).toEqual([source]);
  });

  it("a coordinator's state not known: writes nothing and fails retriably", async () => {
    const { dest, aborted } = destination([source, local], undefined);
    const events = await abortHanging(dest);
    expect(aborted).toEqual([]);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "EFFECT_FAILED", stateEpoch: 3, retryable: true });
  });

  it("a destination that cannot list transactions: writes nothing (as before KIP-664)", async () => {
    const { dest, aborted } = destination([source], "no port");
    expect(await abortHanging(dest)).toEqual([{ type: "TXNS_ABORTED", stateEpoch: 3 }]);
    expect(aborted).toEqual([]);
  });
});
