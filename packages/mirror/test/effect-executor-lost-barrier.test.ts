import { ControlRecordType, controlTypeOf, RecordBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import type { DestinationCluster, LocalReplica } from "../src/ports";
import { flush } from "./core-helpers";
import { executorOver, recordingPartition } from "./executor-helpers";

/**
 * orders-0 on the destination: replica 0 leads first, replica 1 (out of the ISR, with the source's
 * transaction of producer 7 open) can be elected uncleanly by `elect(1)`. `events` tells every write and
 * flag change in order: control batches by type and broker, and the read-only flag cleared.
 */
function destination() {
  const events: string[] = [];
  let leader = 0;
  const replica = (id: number, open: { producerId: bigint; producerEpoch: number }[]) => {
    let endsWithBarrier = false;
    let end = 10n;
    return {
      topic: "orders",
      partition: 0,
      logEndOffset: () => end,
      endsWithPidResetAbove: () => endsWithBarrier,
      ongoingTransactions: () => open.map((t) => ({ ...t, firstOffset: 0n })),
      awaitReplicated: async () => undefined,
      appendControlBatch: (buffer: Buffer) => {
        const batch = new RecordBatch(buffer);
        const type = controlTypeOf(batch);
        events.push(
          `${type === ControlRecordType.ABORT ? `ABORT ${batch.producerId}` : "PID_RESET"} on ${id}`,
        );
        endsWithBarrier = type === ControlRecordType.MIRROR_PID_RESET;
        if (type === ControlRecordType.ABORT) open.splice(0, open.length);
        end++;
      },
    } as unknown as LocalReplica;
  };
  const replicas = [replica(0, []), replica(1, [{ producerId: 7n, producerEpoch: 2 }])];
  const dest: Partial<DestinationCluster> = {
    clusterId: "destination",
    leaderOf: () => leader,
    replica: (id) => replicas[id],
    setMirrorReadOnly: (_topic, _partition, readOnly) => events.push(`read-only ${readOnly}`),
  };
  return { dest, events, elect: (id: number) => (leader = id) };
}

describe("effect executor: STOPPED checks the failover's barrier before the topic becomes writable", () => {
  it("writes the ABORT markers and PID reset again on a leader elected without them, then clears the flag", async () => {
    const { dest, events, elect } = destination();
    const p = recordingPartition("orders", 0);
    const executor = executorOver(dest);
    executor.run(p.runtime, { type: "appendPidReset", params: { stateEpoch: 5, lme: 1 } });
    await flush();
    expect(p.events).toEqual([{ type: "PID_RESET_APPENDED", stateEpoch: 5 }]);
    elect(1); // unclean: replica 1 never had the barrier
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    expect(events).toEqual(["PID_RESET on 0", "ABORT 7 on 1", "PID_RESET on 1", "read-only false"]);
    expect(p.events).toEqual([{ type: "PID_RESET_APPENDED", stateEpoch: 5 }]);
  });

  it("writes nothing when the leader still ends with the barrier", async () => {
    const { dest, events } = destination();
    const p = recordingPartition("orders", 0);
    const executor = executorOver(dest);
    executor.run(p.runtime, { type: "appendPidReset", params: { stateEpoch: 5, lme: 1 } });
    await flush();
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    expect(events).toEqual(["PID_RESET on 0", "read-only false"]);
  });

  it("writes nothing for a STOPPED this coordinator did not just reach from that STOPPING (local writes may follow)", async () => {
    const { dest, events, elect } = destination();
    const p = recordingPartition("orders", 0);
    const executor = executorOver(dest);
    elect(1);
    // A STOPPED loaded again: this coordinator wrote no barrier.
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    elect(0);
    executor.run(p.runtime, { type: "appendPidReset", params: { stateEpoch: 5, lme: 1 } });
    await flush();
    elect(1);
    // Not the STOPPED right after that STOPPING (another state epoch); and the check is taken once, so a
    // later step of STOPPED's epoch does not write either.
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 9 } });
    await flush();
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    expect(events).toEqual(["read-only false", "PID_RESET on 0", "read-only false", "read-only false"]);
  });
});
