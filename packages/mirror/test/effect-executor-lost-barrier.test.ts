import { ControlRecordType, controlTypeOf, RecordBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import type { DestinationCluster, LocalReplica } from "../src/ports";
import { flush } from "./core-helpers";
import { executorOver, recordingPartition } from "./executor-helpers";

/**
 * orders-0 on the destination: replica 0 leads first, replica 1 (out of the ISR, with the source's
 * transaction of producer 7 open) can be elected uncleanly by `elect(1)`; `elect(-1)` leaves it with no
 * leader. `events` tells every write and flag change in order: control batches by type and broker, and the
 * read-only flag cleared. Writes are replicated once `replicate()` is called (`autoReplicate`: at once);
 * `replicationLost()` fails the waits.
 * `held` is the engine's read-only flag (`mirrorReadOnlyHeld`), cleared with the flag. `localData`: the
 * leaders' logs hold data above the LME (local producers wrote after the failover).
 */
function destination(options: { held?: boolean; autoReplicate?: boolean; localData?: boolean } = {}) {
  const events: string[] = [];
  let leader = 0;
  let held = options.held ?? false;
  const waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const replica = (id: number, open: { producerId: bigint; producerEpoch: number }[]) => {
    let endsWithBarrier = false;
    let end = 10n;
    return {
      topic: "orders",
      partition: 0,
      logEndOffset: () => end,
      endsWithPidResetAbove: () => endsWithBarrier,
      hasDataBatchAbove: () => options.localData === true,
      ongoingTransactions: () => open.map((t) => ({ ...t, firstOffset: 0n })),
      awaitReplicated: () =>
        options.autoReplicate === false
          ? new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }))
          : Promise.resolve(),
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
    leaderEpochOf: () => 0,
    replica: (id) => replicas[id],
    setMirrorReadOnly: (_topic, _partition, readOnly) => {
      held = held && readOnly;
      events.push(`read-only ${readOnly}`);
    },
    mirrorReadOnlyHeld: () => held,
  };
  const replicate = () => {
    for (const w of waiting.splice(0)) w.resolve();
  };
  /** The leader stops leading before its in-sync replicas have the writes: the waits fail. */
  const replicationLost = () => {
    for (const w of waiting.splice(0)) w.reject(new Error("NOT_LEADER_OR_FOLLOWER: stopped leading"));
  };
  return { dest, events, elect: (id: number) => (leader = id), replicate, replicationLost };
}

/** The context of a partition STOPPED at state epoch 6 with LME 1 (`leaderEpoch` -1: no mirrored data). */
function stopped(leaderEpoch = 4) {
  return {
    record: { state: "STOPPED", stateEpoch: 6, leaderEpoch, previousState: "STOPPING" },
    lastMirrorEpoch: 1,
    pending: null,
  };
}

describe("effect executor: STOPPED checks the failover's barrier before the topic becomes writable", () => {
  it("writes the ABORT markers and PID reset again on a leader elected without them, then clears the flag once replicated", async () => {
    const { dest, events, elect, replicate } = destination({ autoReplicate: false });
    const p = recordingPartition("orders", 0, stopped());
    const executor = executorOver(dest);
    executor.run(p.runtime, { type: "appendPidReset", params: { stateEpoch: 5, lme: 1 } });
    await flush();
    replicate();
    await flush();
    expect(p.events).toEqual([{ type: "PID_RESET_APPENDED", stateEpoch: 5 }]);
    elect(1); // unclean: replica 1 never had the barrier
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    // Not writable before the new leader's in-sync replicas have the barrier.
    expect(events).toEqual(["PID_RESET on 0", "ABORT 7 on 1", "PID_RESET on 1"]);
    replicate();
    await flush();
    expect(events).toEqual(["PID_RESET on 0", "ABORT 7 on 1", "PID_RESET on 1", "read-only false"]);
    expect(p.events).toEqual([{ type: "PID_RESET_APPENDED", stateEpoch: 5 }]);
  });

  it("writes the barrier again after another unclean election while it was being replicated", async () => {
    const { dest, events, elect, replicate } = destination({ held: true, autoReplicate: false });
    const p = recordingPartition("orders", 0, stopped());
    const executor = executorOver(dest);
    elect(1);
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    elect(0); // replica 0 never had this barrier either
    replicate();
    await flush();
    expect(events).toEqual(["ABORT 7 on 1", "PID_RESET on 1", "PID_RESET on 0"]);
    replicate();
    await flush();
    expect(events).toEqual(["ABORT 7 on 1", "PID_RESET on 1", "PID_RESET on 0", "read-only false"]);
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

  it("a coordinator that loaded STOPPED with the engine's flag still set checks the barrier too", async () => {
    const { dest, events, elect } = destination({ held: true });
    const p = recordingPartition("orders", 0, stopped());
    const executor = executorOver(dest); // wrote no barrier itself: the coordinator that did was lost
    elect(1);
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    expect(events).toEqual(["ABORT 7 on 1", "PID_RESET on 1", "read-only false"]);
    expect(p.events).toEqual([]);
  });

  it("a coordinator that loaded STOPPED with the engine's flag still set awaits the barrier on the in-sync replicas", async () => {
    const { dest, events, replicate } = destination({ held: true, autoReplicate: false });
    const lost = recordingPartition("orders", 0);
    executorOver(dest).run(lost.runtime, { type: "appendPidReset", params: { stateEpoch: 5, lme: 1 } });
    await flush();
    // That coordinator is lost before the barrier is replicated; the next one loads STOPPED.
    const p = recordingPartition("orders", 0, stopped());
    executorOver(dest).run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    expect(events).toEqual(["PID_RESET on 0"]);
    replicate();
    await flush();
    expect(events).toEqual(["PID_RESET on 0", "read-only false"]);
  });

  it("a STOPPED whose flag was cleared already, or whose log held no mirrored data, gets no markers (local transactions are live)", async () => {
    for (const [held, leaderEpoch] of [
      [false, 4],
      [true, -1],
    ] as const) {
      const { dest, events, elect } = destination({ held });
      const p = recordingPartition("orders", 0, stopped(leaderEpoch));
      const executor = executorOver(dest);
      elect(1);
      executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
      await flush();
      expect(events).toEqual(["read-only false"]);
    }
  });

  it("a STOPPED failed again after local producers wrote (STOPPING set the flag again) gets no markers", async () => {
    const { dest, events, elect } = destination({ held: true, localData: true });
    const p = recordingPartition("orders", 0, stopped());
    const executor = executorOver(dest);
    elect(1); // producer 7's transaction is a local one, live
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    expect(events).toEqual(["read-only false"]);
    expect(p.events).toEqual([]);
  });

  it("a wait for the barrier that fails once STOPPED is being left (a START's commit) fails nothing", async () => {
    const { dest, events, elect, replicationLost } = destination({ held: true, autoReplicate: false });
    const context: Omit<ReturnType<typeof stopped>, "pending"> & { pending: object | null } = stopped();
    const p = recordingPartition("orders", 0, context);
    const executor = executorOver(dest);
    elect(1);
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    expect(events).toEqual(["ABORT 7 on 1", "PID_RESET on 1"]);
    // The operator adds the topic back: START's PREPARING record is being appended.
    context.pending = { to: "PREPARING", record: { state: "PREPARING", stateEpoch: 7 } };
    replicationLost();
    await flush();
    expect(p.events).toEqual([]);
    expect(events).toEqual(["ABORT 7 on 1", "PID_RESET on 1"]);
  });

  it("a wait for the barrier that fails while STOPPED stays fails the step, retriable", async () => {
    const { dest, events, elect, replicationLost } = destination({ held: true, autoReplicate: false });
    const p = recordingPartition("orders", 0, stopped());
    const executor = executorOver(dest);
    elect(1);
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    replicationLost();
    await flush();
    expect(p.events).toEqual([expect.objectContaining({ type: "EFFECT_FAILED", stateEpoch: 6 })]);
    expect(events).toEqual(["ABORT 7 on 1", "PID_RESET on 1"]);
  });

  it("keeps the topic read-only while it has no leader: the step fails, retriable", async () => {
    const { dest, events, elect } = destination({ held: true });
    const p = recordingPartition("orders", 0, stopped());
    const executor = executorOver(dest);
    elect(-1);
    executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 6 } });
    await flush();
    expect(events).toEqual([]);
    expect(p.events).toEqual([
      expect.objectContaining({ type: "EFFECT_FAILED", stateEpoch: 6, retryable: true }),
    ]);
    expect((p.events[0] as { message: string }).message).toMatch(/no running leader.*stays read-only/);
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
