import { InvalidMirrorStateError } from "@cluster-mirror/machines";
import { ControlRecordType } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { controlBatches, MIRROR, mirrorEnv, recordBatch, TOPIC } from "./core-helpers";

describe("coordinator runtime: lifecycle scenarios of the seeds", () => {
  it("start: UNKNOWN -> PREPARING -> MIRRORING, a START record then the fetcher", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    const done = env.router.command(key, { type: "START" });
    await env.settle(1000);
    await done;
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    const leader = env.destination.leaderOf(TOPIC, 0);
    expect(env.fetcherOf(leader).calls).toEqual([`add ${TOPIC}-0`]);
    expect(env.fakeSource.calls).toEqual(["listMirrors", "lastMirrorEpoch 0", `listOffsets ${TOPIC}-0 -2`]);
    // The produce is refused while mirroring.
    await expect(
      env.dest.broker(leader)!.produce({ topic: TOPIC, partition: 0, acks: 1, batch: recordBatch(["x"]) }),
    ).rejects.toThrow(/read-only/);
  });

  it("failover: STOPPING aborts open transactions, appends the PID reset, leaves the topic writable", async () => {
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
    env.endTxnOnSource(4002n, false);
    void env.router.command(key, { type: "START" });
    await env.settle(1000);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    // The fetcher mirrored everything up to (not including) tx 4001's COMMIT.
    await env.copyFromSource(commitOffset);
    const mirroredEnd = env.destBatches().at(-1)!.lastOffset + 1n;

    const stopped = env.router.command(key, { type: "STOP" });
    await env.settle(1000);
    await stopped;
    const view = env.stateOf(key)!;
    expect(view.state).toBe("STOPPED");
    expect(view.lastMirrorEpoch).toBe(5);
    const leader = env.destination.leaderOf(TOPIC, 0);
    expect(env.fetcherOf(leader).calls).toContain(`remove ${TOPIC}-0`);
    const replica = env.destination.replica(leader, TOPIC, 0)!;
    expect(replica.leaderEpoch()).toBeGreaterThan(5);
    const controls = controlBatches(env.destBatches().filter((b) => b.baseOffset >= mirroredEnd));
    expect(controls).toEqual([
      { type: ControlRecordType.ABORT, producerId: 4001n },
      { type: ControlRecordType.ABORT, producerId: 4002n },
      { type: ControlRecordType.MIRROR_PID_RESET, producerId: -1n },
    ]);
    expect(replica.ongoingTransactions()).toEqual([]);
    // The markers carry the bumped epoch, above every mirrored batch.
    const markerEpochs = env
      .destBatches()
      .filter((b) => b.isControl)
      .map((b) => b.partitionLeaderEpoch);
    expect(Math.min(...markerEpochs)).toBeGreaterThan(5);
    // Writable: producer 4001 starts again at sequence 0 (the PID reset cleared its state).
    const produced = env.dest.broker(leader)!.produce({
      topic: TOPIC,
      partition: 0,
      acks: -1,
      batch: recordBatch(["new"], { producerId: 4001n, producerEpoch: 0, baseSequence: 0 }),
    });
    await env.settle(100);
    const res = await produced;
    expect(res).toMatchObject({ duplicate: false });
    const log = env.dest.broker(leader)!.replica(TOPIC, 0)!.log;
    expect(log.lastStableOffset).toBe(log.highWatermark);
  });

  it("restart a stopped mirror: STOPPED -> PREPARING truncates to the end of the source's LME", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic(5);
    await env.produceToSource(["a", "b"]);
    void env.router.command(key, { type: "START" });
    await env.settle(1000);
    await env.copyFromSource();
    const mirroredEnd = env.destBatches().at(-1)!.lastOffset + 1n;
    void env.router.command(key, { type: "STOP" });
    await env.settle(1000);
    expect(env.stateOf(key)?.state).toBe("STOPPED");
    const leader = env.destination.leaderOf(TOPIC, 0);
    await env.dest
      .broker(leader)!
      .produce({ topic: TOPIC, partition: 0, acks: 1, batch: recordBatch(["local"]) });
    await env.settle(100);
    expect(env.destination.replica(leader, TOPIC, 0)!.logEndOffset()).toBeGreaterThan(mirroredEnd);
    // The source (the old primary, now following) recorded LME 5 at its own failover.
    env.fakeSource.lmes.set(`${key.topicId}:0`, 5);
    const started = env.router.command(key, { type: "START" });
    await env.settle(1000);
    await started;
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    expect(env.stateOf(key)?.lastMirrorEpoch).toBe(-1);
    expect(env.destination.replica(env.destination.leaderOf(TOPIC, 0), TOPIC, 0)!.logEndOffset()).toBe(
      mirroredEnd,
    );
  });

  it("pause and resume: the fetcher is removed and added back, the log is not truncated", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    await env.produceToSource(["a", "b", "c"]);
    void env.router.command(key, { type: "START" });
    await env.settle(1000);
    await env.copyFromSource();
    const leader = env.destination.leaderOf(TOPIC, 0);
    const end = env.destination.replica(leader, TOPIC, 0)!.logEndOffset();
    await Promise.all([env.router.command(key, { type: "PAUSE" }), env.settle(1000)]);
    await env.settle(1000);
    expect(env.stateOf(key)?.state).toBe("PAUSED");
    await Promise.all([env.router.command(key, { type: "RESUME" }), env.settle(1000)]);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    expect(env.fetcherOf(leader).calls).toEqual([`add ${TOPIC}-0`, `remove ${TOPIC}-0`, `add ${TOPIC}-0`]);
    expect(env.destination.replica(leader, TOPIC, 0)!.logEndOffset()).toBe(end);
    // Still read-only while paused and mirroring.
    await expect(
      env.dest.broker(leader)!.produce({ topic: TOPIC, partition: 0, acks: 1, batch: recordBatch(["x"]) }),
    ).rejects.toThrow(/read-only/);
  });

  // The retry of a FAILED partition whose log is still a copy of the source ends PAUSED or MIRRORING as the
  // topic's mirror.name asks when its timer fires (no metadata manager runs here: nothing else would move it).
  it("a FAILED retry reads mirror.name as it fires: paused while FAILED ends PAUSED, resumed ends MIRRORING", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    void env.router.command(key, { type: "START" });
    await env.settle(1000);
    const leader = env.destination.leaderOf(TOPIC, 0);
    const fail = () =>
      Promise.all([
        env.router.command(key, { type: "FAIL", message: "source down", retryable: true, random: 0.5 }),
        env.settle(100),
      ]);
    const setMirrorName = (value: string) =>
      env.dest.controller.incrementalAlterConfigs({ type: "topic", name: TOPIC }, [
        { name: "mirror.name", op: "SET", value },
      ]);
    await fail();
    expect(env.stateOf(key)).toMatchObject({ state: "FAILED", previousState: "MIRRORING" });
    setMirrorName(`${MIRROR}.paused`);
    await env.settle(5000);
    expect(env.stateOf(key)?.state).toBe("PAUSED");
    // Removed on FAILED's entry; never added back.
    expect(env.fetcherOf(leader).calls).toEqual([`add ${TOPIC}-0`, `remove ${TOPIC}-0`, `remove ${TOPIC}-0`]);

    await fail();
    expect(env.stateOf(key)).toMatchObject({ state: "FAILED", previousState: "PAUSED" });
    setMirrorName(MIRROR);
    await env.settle(5000);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    expect(env.fetcherOf(leader).calls.at(-1)).toBe(`add ${TOPIC}-0`);
  });

  it("FAILED (non-retryable) refuses START; remove (STOP) then add back (START) recovers", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    void env.router.command(key, { type: "START" });
    await env.settle(1000);
    await Promise.all([
      env.router.command(key, {
        type: "FAIL",
        message: "source cluster id changed",
        retryable: false,
        random: 0.5,
      }),
      env.settle(100),
    ]);
    expect(env.stateOf(key)).toMatchObject({
      state: "FAILED",
      retryAttempt: -1,
      errorMessage: "source cluster id changed",
    });
    await expect(env.router.command(key, { type: "START" })).rejects.toBeInstanceOf(InvalidMirrorStateError);
    await Promise.all([env.router.command(key, { type: "STOP" }), env.settle(1000)]);
    await env.settle(1000);
    expect(env.stateOf(key)?.state).toBe("STOPPED");
    await Promise.all([env.router.command(key, { type: "START" }), env.settle(1000)]);
    await env.settle(1000);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
  });

  it("a mirror loop fails the partition without retry", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    env.fakeSource.mirrors = [{ name: "back", sourceClusterId: env.dest.clusterId, topics: [TOPIC] }];
    void env.router.command(key, { type: "START" });
    await env.settle(1000);
    expect(env.stateOf(key)).toMatchObject({ state: "FAILED", retryAttempt: -1 });
    expect(env.stateOf(key)?.errorMessage).toMatch(/mirror loop/);
  });

  it("commands for a mirror are refused with NOT_COORDINATOR when no coordinator runs", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    for (const id of [...env.runtimes.keys()]) env.router.unregister(id);
    await expect(env.router.command(key, { type: "START" })).rejects.toMatchObject({
      errorName: "NOT_COORDINATOR",
    });
    expect(MIRROR).toBe("m1");
  });
});
