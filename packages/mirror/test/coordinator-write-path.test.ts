import { ClusterError } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { foldMirrorState } from "../src/coordinator/load-mirror-state";
import { mirrorStatePartitionFor } from "../src/coordinator/mirror-state-partition";
import { EmbeddedStateLog, MIRROR_STATE_TOPIC } from "../src/destination/embedded-state-log";
import type { StateLogRecord } from "../src/ports";
import { mirrorEnv } from "./core-helpers";

function allRecords(env: Awaited<ReturnType<typeof mirrorEnv>>): StateLogRecord[] {
  const out: StateLogRecord[] = [];
  for (let p = 0; p < env.numStatePartitions; p++) {
    const leader = env.destination.leaderOf(MIRROR_STATE_TOPIC, p);
    out.push(...new EmbeddedStateLog(env.dest, leader, p).readAll());
  }
  return out;
}

/** What compaction keeps: the last record per key, tombstones dropped. */
function compacted(records: StateLogRecord[]): StateLogRecord[] {
  const last = new Map<string, StateLogRecord>();
  for (const r of records) last.set(r.key.toString("hex"), r);
  return [...last.values()].filter((r) => r.value !== null).sort((a, b) => (a.offset < b.offset ? -1 : 1));
}

/** A MIRRORING partition, its coordinator runtime, its `__mirror_state` partition and that shard's epoch. */
async function mirroringOnItsCoordinator() {
  const env = await mirrorEnv();
  const key = await env.createTopic();
  void env.router.command(key, { type: "START" });
  await env.settle(1000);
  const rt = env.router.coordinatorOf(key)!;
  const p = rt.statePartitionOf(key);
  return { env, key, rt, p, epoch: rt.shardFor(p)!.leaderEpoch };
}

describe("coordinator runtime: the write path", () => {
  it("a failed append leaves the committed state and runs no effect; the retry commits", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    for (const log of env.stateLogs.values())
      log.failWith = new ClusterError("NOT_ENOUGH_REPLICAS", "test: ISR too small");
    const started = env.router.command(key, { type: "START" });
    await env.settle(50);
    expect(env.stateOf(key)?.state).toBe("UNKNOWN");
    expect(env.fakeSource.calls).toEqual([]);
    expect([...env.fetchers.values()].flatMap((f) => f.calls)).toEqual([]);
    for (const log of env.stateLogs.values()) log.failWith = undefined;
    await env.settle(10_000);
    await started;
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
  });

  it("a coordinator cut off from the other brokers still writes its own log (soak FC_SEED=15)", async () => {
    // A network cut between brokers once made the coordinator's own broker look gone to its state log:
    // appends failed as NOT_LEADER_OR_FOLLOWER, the partition actors ended as fenced while the shard stayed
    // ACTIVE, and the partitions vanished from describe for good.
    const env = await mirrorEnv();
    const key = await env.createTopic();
    const started = env.router.command(key, { type: "START" });
    await env.settle(10_000);
    await started;
    const statePartition = mirrorStatePartitionFor(key, env.numStatePartitions);
    const leader = env.destination.leaderOf(MIRROR_STATE_TOPIC, statePartition);
    const log = new EmbeddedStateLog(env.dest, leader, statePartition);
    const epoch = env.dest.controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!.leaderEpoch;
    env.dest.setReachable(leader, false);
    expect(log.isLeaderAt(epoch)).toBe(true);
    expect(log.readAll().length).toBeGreaterThan(0);
    const paused = env.router.command(key, { type: "PAUSE" });
    // The ISR shrinks to the cut-off leader after replica.lag.time.max.ms; then the append commits.
    await env.settle(60_000);
    await paused;
    expect(env.stateOf(key)?.state).toBe("PAUSED");
    env.dest.setReachable(leader, true);
  });

  it("records of many partitions written together go out in one append per shard", async () => {
    const env = await mirrorEnv({ statePartitions: 1 });
    const topicId = env.source.controller.createTopic({
      name: "many",
      numPartitions: 8,
      replicationFactor: 1,
    });
    env.destination.createMirrorTopic({
      name: "many",
      topicId,
      numPartitions: 8,
      replicationFactor: 3,
      configs: { "mirror.name": "m1" },
    });
    await env.settle(100);
    const log = [...env.stateLogs.values()].find(
      (l) =>
        l.partition === 0 &&
        l.isLeaderAt(
          env.runtimes.get(env.destination.leaderOf(MIRROR_STATE_TOPIC, 0))!.shardFor(0)!.leaderEpoch,
        ),
    )!;
    const before = log.appends;
    const done = Array.from({ length: 8 }, (_, partition) =>
      env.router.command({ mirror: "m1", topic: "many", topicId, partition }, { type: "START" }),
    );
    await env.settle(10);
    expect(log.appends - before).toBe(1);
    await env.settle(1000);
    await Promise.all(done);
    expect(env.router.describe("m1").map((v) => v.state)).toEqual(Array(8).fill("MIRRORING"));
  });

  it("replaying the full history and the compacted log give the same states; a reload gives the same views", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic(5);
    await env.produceToSource(["a"]);
    void env.router.command(key, { type: "START" });
    await env.settle(1000);
    await env.copyFromSource();
    for (const cmd of ["PAUSE", "RESUME", "STOP", "START", "STOP"] as const) {
      void env.router.command(key, { type: cmd });
      await env.settle(1000);
    }
    expect(env.stateOf(key)?.state).toBe("STOPPED");
    const full = allRecords(env);
    expect(foldMirrorState(full, () => {})).toEqual(foldMirrorState(compacted(full), () => {}));
    const before = env.router.describe();
    env.crash(env.coordinatorBroker(key));
    await env.settle(1000);
    expect(env.router.describe()).toEqual(before);
  });

  it("tombstoneMirror removes every record of the mirror", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    await env.startThenStop(key);
    const tombstoned = env.router.tombstoneMirror("m1");
    await env.settle(100);
    await tombstoned;
    expect(env.router.describe("m1")).toEqual([]);
    expect(foldMirrorState(allRecords(env), () => {}).size).toBe(0);
  });

  it("remote ReadMirrorStates / WriteMirrorStates refuse a stale coordinator epoch or state epoch", async () => {
    const { env, key, rt, p, epoch } = await mirroringOnItsCoordinator();
    const read = rt.readMirrorStates(p, [key], epoch);
    expect(read.states[0]?.state).toBe("MIRRORING");
    expect(() => rt.readMirrorStates(p, [key], epoch - 1)).toThrow(/older/);
    await expect(
      rt.writeMirrorStates(p, epoch - 1, [{ key, stateEpoch: -1, command: { type: "PAUSE" } }]),
    ).rejects.toMatchObject({
      errorName: "FENCED_LEADER_EPOCH",
    });
    const stale = await rt.writeMirrorStates(p, epoch, [{ key, stateEpoch: 0, command: { type: "PAUSE" } }]);
    expect(stale[0]?.error?.message).toMatch(/stale write/);
    const ok = rt.writeMirrorStates(p, epoch, [
      { key, stateEpoch: read.states[0]!.stateEpoch, command: { type: "PAUSE" } },
    ]);
    await env.settle(1000);
    expect((await ok)[0]?.error).toBeUndefined();
    expect(env.stateOf(key)?.state).toBe("PAUSED");
  });

  it("remote calls with a newer coordinator epoch than this broker's are refused (it lags): nothing is written", async () => {
    const { env, key, rt, p, epoch } = await mirroringOnItsCoordinator();
    expect(() => rt.readMirrorStates(p, [key], epoch + 1)).toThrow(
      expect.objectContaining({ errorName: "UNKNOWN_LEADER_EPOCH", message: expect.stringMatching(/newer/) }),
    );
    await expect(
      rt.writeMirrorStates(p, epoch + 1, [{ key, stateEpoch: -1, command: { type: "PAUSE" } }]),
    ).rejects.toMatchObject({ errorName: "UNKNOWN_LEADER_EPOCH" });
    await env.settle(1000);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    // An empty request is answered with nothing; an unchecked write (state epoch -1) is applied, and each
    // result names its partition.
    expect(await rt.writeMirrorStates(p, epoch, [])).toEqual([]);
    const unchecked = rt.writeMirrorStates(p, epoch, [{ key, stateEpoch: -1, command: { type: "PAUSE" } }]);
    await env.settle(1000);
    expect(await unchecked).toEqual([{ key }]);
    expect(env.stateOf(key)?.state).toBe("PAUSED");
  });

  it("maps partitions to coordinator partitions with a stable hash that spreads keys", () => {
    const key = { mirror: "m1", topicId: "00000000-0000-0000-0000-000000000001", partition: 0 };
    expect(mirrorStatePartitionFor(key, 50)).toBe(mirrorStatePartitionFor({ ...key }, 50));
    const counts = new Array(50).fill(0);
    for (let i = 0; i < 5000; i++) counts[mirrorStatePartitionFor({ ...key, partition: i }, 50)]++;
    expect(Math.min(...counts)).toBeGreaterThan(50);
    expect(() => mirrorStatePartitionFor(key, 0)).toThrow(RangeError);
  });
});
