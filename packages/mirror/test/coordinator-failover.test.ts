import { ControlRecordType } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { partitionStateRecord } from "../src/coordinator/state-records";
import { EmbeddedStateLog, MIRROR_STATE_TOPIC } from "../src/destination/embedded-state-log";
import { controlBatches, mirrorEnv, TOPIC } from "./core-helpers";
import { valuesBatch } from "./data-helpers";

/** A mirrored partition with tx 4001 (COMMIT not mirrored) and tx 4002 open, in MIRRORING. */
async function mirroringWithOpenTransactions() {
  const env = await mirrorEnv();
  const key = await env.createTopic(5);
  await env.produceToSource(["a", "b"]);
  await env.produceToSource(["t1"], {
    producerId: 4001n,
    producerEpoch: 0,
    baseSequence: 0,
    isTransactional: true,
  });
  await env.produceToSource(["t2"], {
    producerId: 4002n,
    producerEpoch: 0,
    baseSequence: 0,
    isTransactional: true,
  });
  const commitOffset = env.endTxnOnSource(4001n, true);
  void env.router.command(key, { type: "START" });
  await env.settle(1000);
  await env.copyFromSource(commitOffset);
  const mirroredEnd = env.destBatches().at(-1)!.lastOffset + 1n;
  return { env, key, mirroredEnd };
}

const EXPECTED_CONTROLS = [
  { type: ControlRecordType.ABORT, producerId: 4001n },
  { type: ControlRecordType.ABORT, producerId: 4002n },
  { type: ControlRecordType.MIRROR_PID_RESET, producerId: -1n },
];

describe("coordinator runtime: losing __mirror_state leadership", () => {
  /**
   * Fails over a partition with two open transactions while the coordinator dies at the PID reset barrier
   * (just before or just after appending it); returns what the failover appended after the mirrored data.
   */
  async function failoverLosingCoordinatorAtBarrier(hook: "beforeControlBatch" | "afterControlBatch") {
    const { env, key, mirroredEnd } = await mirroringWithOpenTransactions();
    const coordinator = env.coordinatorBroker(key);
    let crashed = false;
    env.destination.hooks[hook] = (_topic, type) => {
      if (type === ControlRecordType.MIRROR_PID_RESET && !crashed) {
        crashed = true;
        env.crash(coordinator);
        throw new Error("broker process died");
      }
    };
    void env.router.command(key, { type: "STOP" }).catch(() => {});
    await env.settle(3000);
    expect(crashed).toBe(true);
    expect(env.coordinatorBroker(key)).not.toBe(coordinator);
    expect(env.stateOf(key)).toMatchObject({ state: "STOPPED", lastMirrorEpoch: 5 });
    return env.destBatches().filter((b) => b.baseOffset >= mirroredEnd);
  }

  it("mid-STOPPING: the new coordinator replays, finishes the failover, no duplicated markers", async () => {
    // Dies after the ABORT markers, before the PID reset.
    const after = await failoverLosingCoordinatorAtBarrier("beforeControlBatch");
    expect(controlBatches(after)).toEqual(EXPECTED_CONTROLS);
    expect(after.length).toBe(3);
  });

  it("mid-STOPPING after the barrier: the new coordinator finds its barrier (above the LME) and writes no second one", async () => {
    // The barrier is appended; STOPPED is not recorded.
    const after = await failoverLosingCoordinatorAtBarrier("afterControlBatch");
    expect(controlBatches(after)).toEqual(EXPECTED_CONTROLS);
    expect(after.length).toBe(3);
  });

  it("mid-PREPARING: the new coordinator restarts PREPARING and ends MIRRORING with the same log", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic(5);
    await env.produceToSource(["a", "b"]);
    const coordinator = env.coordinatorBroker(key);
    let crashed = false;
    env.destination.hooks.beforeFollowersTruncated = () => {
      if (!crashed) {
        crashed = true;
        env.crash(coordinator); // dies after truncating, while waiting for the ISR
        throw new Error("broker process died");
      }
    };
    void env.router.command(key, { type: "START" }).catch(() => {});
    await env.settle(3000);
    expect(crashed).toBe(true);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    const leader = env.destination.leaderOf(TOPIC, 0);
    expect(env.fetcherOf(leader).calls).toEqual([`add ${TOPIC}-0`]);
    expect(env.destination.replica(leader, TOPIC, 0)!.logEndOffset()).toBe(0n);
  });

  it("a coordinator that lost leadership cannot write: its append is fenced and its actor stops", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    void env.router.command(key, { type: "START" });
    await env.settle(1000);
    const coordinator = env.coordinatorBroker(key);
    const zombie = env.runtimes.get(coordinator)!;
    const statePartition = zombie.statePartitionOf(key);
    const oldEpoch = zombie.shardFor(statePartition)!.leaderEpoch;
    // The broker dies and comes back as a follower; its old runtime never heard of it.
    env.dest.crashBroker(coordinator);
    env.router.unregister(coordinator);
    env.dest.startBroker(coordinator);
    await env.settle(1000);
    expect(env.coordinatorBroker(key)).not.toBe(coordinator);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");

    const refused = zombie.command(key, { type: "PAUSE" }).then(
      () => "accepted",
      (e: { errorName?: string }) => e.errorName,
    );
    await env.settle(100);
    expect(await refused).toBe("NOT_COORDINATOR");
    expect(env.stateOf(key)?.state).toBe("MIRRORING");

    const log = new EmbeddedStateLog(env.dest, coordinator, statePartition);
    const record = partitionStateRecord(key, {
      state: "PAUSED",
      leaderEpoch: -1,
      stateEpoch: 99,
      errorMessage: null,
      retryAttempt: 0,
      previousState: null,
    });
    await expect(log.append([record], oldEpoch)).rejects.toMatchObject({
      errorName: "NOT_LEADER_OR_FOLLOWER",
    });
    const leader = env.destination.leaderOf(MIRROR_STATE_TOPIC, statePartition);
    const onLeader = new EmbeddedStateLog(env.dest, leader, statePartition);
    await expect(onLeader.append([record], oldEpoch)).rejects.toMatchObject({
      errorName: "FENCED_LEADER_EPOCH",
    });
  });
});

describe("coordinator runtime: a removal overtakes PREPARING's truncation", () => {
  it("the truncation, answered by the source after STOPPED, leaves the local writes alone", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic(5);
    await env.produceToSource(["a", "b"]);
    let answer!: () => void;
    env.fakeSource.listOffsetsGate = new Promise((resolve) => {
      answer = resolve;
    });
    // PREPARING asks the source for its log start to truncate fully (LME -1); the source is slow.
    void env.router.command(key, { type: "START" });
    await env.settle(200);
    expect(env.stateOf(key)).toMatchObject({ state: "PREPARING" });
    expect(env.fakeSource.calls).toContain(`listOffsets ${TOPIC}-0 -2`);
    // The operator removes the topic: STOPPED, writable, and the application writes.
    void env.router.command(key, { type: "STOP" }).catch(() => {});
    await env.settle(1000);
    expect(env.stateOf(key)).toMatchObject({ state: "STOPPED" });
    const leader = env.dest.leaderFor(TOPIC, 0);
    await leader.produce({ topic: TOPIC, partition: 0, batch: valuesBatch(["local"]), acks: 1 });
    const before = env.destBatches().map((b) => b.buffer.toString("hex"));
    // The log never held mirrored data (removed before the truncation): no barrier, the local write only.
    expect(before.length).toBe(1);
    // The source answers at last: nothing of the log may go.
    answer();
    env.fakeSource.listOffsetsGate = undefined;
    await env.settle(1000);
    expect(env.destBatches().map((b) => b.buffer.toString("hex"))).toEqual(before);
    expect(env.stateOf(key)).toMatchObject({ state: "STOPPED" });
  });
});
