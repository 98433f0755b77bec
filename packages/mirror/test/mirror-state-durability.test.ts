import {
  ClusterError,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  SeededRandom,
} from "@cluster-mirror/cluster";
import { encodeMirrorStateRecord, UnsupportedVersionError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { foldMirrorState } from "../src/coordinator/load-mirror-state";
import { partitionStateRecord, tombstones } from "../src/coordinator/state-records";
import {
  EmbeddedStateLog,
  ensureMirrorStateTopic,
  MIRROR_STATE_DELETE_RETENTION_MS,
  MIRROR_STATE_TOPIC,
} from "../src/destination/embedded-state-log";
import { mirrorEnv, TOPIC } from "./core-helpers";
import { valuesBatch } from "./data-helpers";

const DAY = 24 * 60 * 60 * 1000;

/**
 * A STOPPED (failed over, writable) partition with a local write, then re-added (START) while the last
 * replica of its `__mirror_state` partition cannot fetch: the PREPARING record is on the coordinator's
 * broker and the next replica in line, above the high watermark. Then the coordinator's broker dies.
 */
async function uncommittedPreparingOnTheNextLeader() {
  const env = await mirrorEnv();
  const key = await env.createTopic(5);
  await env.produceToSource(["a", "b"]);
  await env.startThenStop(key, { copy: true });
  expect(env.stateOf(key)).toMatchObject({ state: "STOPPED", stateEpoch: 4 });
  const written = env.dest
    .leaderFor(TOPIC, 0)
    .produce({ topic: TOPIC, partition: 0, batch: valuesBatch(["local"]), acks: -1 });
  await env.settle(100);
  await written;
  const before = env.destBatches().map((b) => b.buffer.toString("hex"));
  const statePartition = env.router.coordinatorOf(key)!.statePartitionOf(key);
  const [first, second, third] = env.dest.controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!
    .replicas as [number, number, number];
  expect(env.coordinatorBroker(key)).toBe(first);
  const logOf = (id: number) => env.dest.localBroker(id)!.replica(MIRROR_STATE_TOPIC, statePartition)!.log;
  env.dest.setReachable(third, false);
  // The START's caller hears of the coordinator's death; whether the re-add counts is the log's to say.
  void env.router.command(key, { type: "START" }).catch(() => {});
  await env.settle(50);
  // The PREPARING record: on the leader and the second replica, not on the third; not committed.
  expect(logOf(second).logEndOffset).toBe(logOf(first).logEndOffset);
  expect(logOf(third).logEndOffset).toBeLessThan(logOf(second).logEndOffset);
  expect(logOf(second).highWatermark).toBe(logOf(third).logEndOffset);
  env.crash(first);
  await env.settle(300);
  expect(env.destination.leaderOf(MIRROR_STATE_TOPIC, statePartition)).toBe(second);
  return { env, key, before, second, third };
}

describe("__mirror_state durability", () => {
  it("tombstoneMirror refuses while a shard that may hold the mirror's keys is loading: they would survive the deletion", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    await env.startThenStop(key);
    expect(env.stateOf(key)?.state).toBe("STOPPED");
    const statePartition = env.router.coordinatorOf(key)!.statePartitionOf(key);
    // The coordinator's broker dies: the new leader of its __mirror_state partition is loading it.
    env.crash(env.coordinatorBroker(key));
    expect(env.router.coordinatorOf(key)?.shardFor(statePartition)?.state).toBe("LOADING");
    const outcome = env.router.tombstoneMirror("m1").then(
      () => "resolved",
      (e: { errorName?: string; retriable?: boolean }) => `${e.errorName} retriable=${e.retriable}`,
    );
    await env.settle(1000);
    expect(await outcome).toBe("COORDINATOR_LOAD_IN_PROGRESS retriable=true");
    // Retried once the shard is ACTIVE: nothing of the mirror is left to come back.
    const retried = env.router.tombstoneMirror("m1");
    await env.settle(100);
    await retried;
    expect(env.router.describe("m1")).toEqual([]);
    const leader = env.destination.leaderOf(MIRROR_STATE_TOPIC, statePartition);
    const records = new EmbeddedStateLog(env.dest, leader, statePartition).readAll();
    expect(foldMirrorState(records, () => {}).size).toBe(0);
  });

  it("a new coordinator does not act on records above the high watermark, which the next election may truncate", async () => {
    const { env, key, before, second, third } = await uncommittedPreparingOnTheNextLeader();
    // The new coordinator waits for the record to be committed: it neither shows nor runs PREPARING (which
    // would truncate the topic's log to the source's LME, cutting the local write and the PID reset barrier).
    expect(env.destBatches().map((b) => b.buffer.toString("hex"))).toEqual(before);
    expect(env.stateOf(key)?.state).not.toBe("PREPARING");
    // It dies too: the third replica, which never had the PREPARING record, is elected. STOPPED is the
    // committed state, and the writable topic must still hold what it held.
    env.crash(second);
    env.dest.setReachable(third, true);
    await env.settle(1000);
    expect(env.stateOf(key)).toMatchObject({ state: "STOPPED", stateEpoch: 4 });
    expect(env.destBatches().map((b) => b.buffer.toString("hex"))).toEqual(before);
  });

  it("the new coordinator loads once the in-sync replicas have its log: the START goes on", async () => {
    const { env, key, third } = await uncommittedPreparingOnTheNextLeader();
    env.dest.setReachable(third, true);
    await env.settle(1000);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
  });

  it("a replica down while a mirror was deleted gets its tombstones however long it was away: no state comes back", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    await env.startThenStop(key);
    const statePartition = env.router.coordinatorOf(key)!.statePartitionOf(key);
    const [first, second, third] = env.dest.controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!
      .replicas as [number, number, number];
    expect(env.coordinatorBroker(key)).toBe(first);
    const logOf = (id: number) => env.dest.localBroker(id)!.replica(MIRROR_STATE_TOPIC, statePartition)!.log;
    // The third replica is down while the mirror is deleted: it keeps the mirror's records.
    env.crash(third);
    await env.settle(100);
    const deleted = env.router.tombstoneMirror("m1");
    await env.settle(100);
    await deleted;
    // Days later (past segment.ms, then past delete.retention.ms's default of a day) the cleaners of the
    // running replicas have compacted the partition: the mirror's records are gone; its tombstones must not.
    env.clock.advance(8 * DAY);
    const other = { ...key, mirror: "other" };
    const rolled = new EmbeddedStateLog(env.dest, first, statePartition).append(
      tombstones(other),
      env.dest.controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!.leaderEpoch,
    );
    await env.settle(100);
    await rolled;
    for (const id of [first, second]) logOf(id).compact();
    env.clock.advance(2 * DAY);
    for (const id of [first, second]) logOf(id).compact();
    // The third replica comes back, catches up, rejoins the ISR, and is the last one standing.
    env.dest.startBroker(third);
    env.startRuntime(third);
    await env.settle(2000);
    expect(env.dest.controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!.isr).toContain(third);
    env.crash(first);
    await env.settle(100);
    env.crash(second);
    await env.settle(1000);
    expect(env.destination.leaderOf(MIRROR_STATE_TOPIC, statePartition)).toBe(third);
    expect(env.runtimes.get(third)!.shardFor(statePartition)?.state).toBe("ACTIVE");
    // The deleted mirror's partition must not come back.
    expect(env.router.describe("m1")).toEqual([]);
    expect(
      foldMirrorState(new EmbeddedStateLog(env.dest, third, statePartition).readAll(), () => {}).size,
    ).toBe(0);
  });

  it("a state value of a version this broker cannot read fails the load: the older value it replaced is not the state", () => {
    const record = (state: "MIRRORING" | "STOPPED", stateEpoch: number) =>
      encodeMirrorStateRecord({
        key: {
          kind: "MirrorPartitionState",
          mirrorName: "m1",
          topicId: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
          partition: 0,
        },
        value: {
          state,
          leaderEpoch: 3,
          stateEpoch,
          errorMessage: null,
          retryAttempt: 0,
          previousState: state === "STOPPED" ? "STOPPING" : "PREPARING",
        },
      });
    const mirroring = record("MIRRORING", 2);
    // A newer broker recorded the failover's end with a value version this one does not know.
    const stopped = record("STOPPED", 4);
    stopped.value!.writeInt16BE(99, 0);
    const history = [
      { offset: 0n, key: mirroring.key, value: mirroring.value },
      { offset: 1n, key: stopped.key, value: stopped.value },
    ];
    // Skipped, the full history would say MIRRORING (the fetcher added back to a writable topic) and the
    // compacted log (only the newer record) nothing at all: neither is the partition's state.
    expect(() => foldMirrorState(history, () => {})).toThrow(UnsupportedVersionError);
    expect(() => foldMirrorState(history, () => {})).toThrow(/offset 1/);
    expect(() => foldMirrorState(history.slice(1), () => {})).toThrow(UnsupportedVersionError);
  });

  it("no record of a mirror's partition lands after its tombstones: a command racing the deletion is refused", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    await env.startThenStop(key);
    const statePartition = env.router.coordinatorOf(key)!.statePartitionOf(key);
    const outcome = (p: Promise<void>) =>
      p.then(
        () => "ok",
        (e: { errorName?: string }) => e.errorName ?? String(e),
      );
    // A re-add (or the metadata manager) sends START while the deletion's tombstones are being written.
    const deleted = outcome(env.router.tombstoneMirror("m1"));
    const started = outcome(env.router.command(key, { type: "START" }));
    await env.settle(2000);
    expect(await deleted).toBe("ok");
    expect(await started).toBe("INVALID_MIRROR_STATE");
    const leader = env.destination.leaderOf(MIRROR_STATE_TOPIC, statePartition);
    expect(
      foldMirrorState(new EmbeddedStateLog(env.dest, leader, statePartition).readAll(), () => {}).size,
    ).toBe(0);
    // The next coordinator finds nothing of the deleted mirror either.
    env.crash(leader);
    await env.settle(2000);
    expect(env.router.describe("m1")).toEqual([]);
  });

  it("a deletion whose tombstones timed out (they may have landed) takes no command of the mirror until it is retried", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    await env.startThenStop(key);
    expect(env.stateOf(key)?.state).toBe("STOPPED");
    const statePartition = env.router.coordinatorOf(key)!.statePartitionOf(key);
    const outcome = (p: Promise<void>) =>
      p.then(
        () => "ok",
        (e: { errorName?: string }) => e.errorName ?? String(e),
      );
    const folded = () => {
      const leader = env.destination.leaderOf(MIRROR_STATE_TOPIC, statePartition);
      return foldMirrorState(new EmbeddedStateLog(env.dest, leader, statePartition).readAll(), () => {});
    };
    for (const log of env.stateLogs.values()) {
      log.failAfterAppendWith = new ClusterError(
        "REQUEST_TIMED_OUT",
        "test: the ISR did not acknowledge in time",
      );
    }
    const deleted = outcome(env.router.tombstoneMirror("m1"));
    await env.settle(1000);
    expect(await deleted).toBe("REQUEST_TIMED_OUT");
    for (const log of env.stateLogs.values()) log.failAfterAppendWith = undefined;
    // The tombstones are in __mirror_state: the partition's state is gone there.
    expect(folded().size).toBe(0);
    // A re-add of the topic would start from a STOPPED state (and its LME) that the log no longer holds: a
    // coordinator loading the log later would find a PREPARING without that LME.
    const started = outcome(env.router.command(key, { type: "START" }));
    await env.settle(1000);
    expect(await started).toBe("INVALID_MIRROR_STATE");
    expect(folded().size).toBe(0);
    // The deletion, retried, completes.
    const again = outcome(env.router.tombstoneMirror("m1"));
    await env.settle(1000);
    expect(await again).toBe("ok");
    expect(env.router.describe("m1")).toEqual([]);
    expect(folded().size).toBe(0);
  });

  it("a deletion whose coordinator stops before its tombstones are written fails with NOT_COORDINATOR, not never", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    await env.startThenStop(key);
    let outcome = "pending";
    void env.router.tombstoneMirror("m1").then(
      () => {
        outcome = "ok";
      },
      (e: { errorName?: string }) => {
        outcome = e.errorName ?? String(e);
      },
    );
    // The coordinator's broker dies with the tombstones waiting in its writer.
    env.crash(env.coordinatorBroker(key));
    await env.settle(2000);
    expect(outcome).toBe("NOT_COORDINATOR");
    // Nothing was written: the next coordinator still has the partition, and the deletion retried completes.
    expect(env.stateOf(key)?.state).toBe("STOPPED");
    let again = "pending";
    void env.router.tombstoneMirror("m1").then(() => {
      again = "ok";
    });
    await env.settle(2000);
    expect(again).toBe("ok");
    expect(env.router.describe("m1")).toEqual([]);
  });

  it("a deletion is refused while a change of one of the mirror's partitions waits for its append", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic();
    await env.startThenStop(key);
    const statePartition = env.router.coordinatorOf(key)!.statePartitionOf(key);
    const started = env.router.command(key, { type: "START" });
    const refused = env.router.tombstoneMirror("m1").then(
      () => "ok",
      (e: { errorName?: string }) => e.errorName ?? String(e),
    );
    await env.settle(2000);
    await started;
    expect(await refused).toBe("INVALID_MIRROR_STATE");
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    const leader = env.destination.leaderOf(MIRROR_STATE_TOPIC, statePartition);
    expect(
      foldMirrorState(new EmbeddedStateLog(env.dest, leader, statePartition).readAll(), () => {}).size,
    ).toBe(1);
  });

  it("a value this broker cannot read fails only its shard's load, with a typed error; the other shards serve", async () => {
    const warnings: string[] = [];
    const env = await mirrorEnv({ warn: (m) => warnings.push(m) });
    const key = await env.createTopic();
    void env.router.command(key, { type: "START" });
    await env.settle(1000);
    const statePartition = env.router.coordinatorOf(key)!.statePartitionOf(key);
    const coordinator = env.coordinatorBroker(key);
    // A newer broker's record for the partition: a MirrorPartitionState value in a version unknown here.
    const newer = partitionStateRecord(key, {
      state: "PAUSED",
      leaderEpoch: 3,
      stateEpoch: 9,
      errorMessage: null,
      retryAttempt: 0,
      previousState: "PAUSING",
    });
    newer.value!.writeInt16BE(99, 0);
    const written = new EmbeddedStateLog(env.dest, coordinator, statePartition).append(
      [newer],
      env.dest.controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!.leaderEpoch,
    );
    await env.settle(100);
    await written;
    env.crash(coordinator);
    await env.settle(1000);
    const shard = env.router.coordinatorOf(key)!.shardFor(statePartition)!;
    expect(shard.state).toBe("FAILED");
    expect(shard.errorMessage).toMatch(/cannot read/);
    expect(env.stateOf(key)).toBeUndefined();
    // The operator hears why, in the log and in the refusal, with what to do (from the load's error).
    expect(warnings.filter((w) => w.includes(`__mirror_state-${statePartition}`))).toEqual([
      expect.stringMatching(/could not load .*cannot read.*Upgrade this broker/),
    ]);
    await expect(env.router.command(key, { type: "PAUSE" })).rejects.toMatchObject({
      errorName: "NOT_COORDINATOR",
      message: expect.stringMatching(
        /could not load it.*offset \d+ holds a value this broker cannot read.*Upgrade/,
      ),
    });
    expect(env.router.loadStatusOf(key).state).toMatch(/^FAILED on broker \d+ \(.*cannot read/);
    // Every other __mirror_state partition is served.
    for (let p = 0; p < env.numStatePartitions; p++) {
      if (p === statePartition) continue;
      const leader = env.destination.leaderOf(MIRROR_STATE_TOPIC, p);
      expect(env.runtimes.get(leader)?.shardFor(p)?.state).toBe("ACTIVE");
    }
  });
});

describe("ensureMirrorStateTopic", () => {
  it("sets delete.retention.ms on a __mirror_state an earlier version created (its cleaner dropped tombstones)", () => {
    const clock = new ManualClock(1_700_000_000_000);
    const cluster = KafkaCluster.start({
      brokers: 1,
      clock,
      scheduler: new ManualScheduler(clock),
      random: new SeededRandom(1),
    });
    cluster.controller.createTopic({
      name: MIRROR_STATE_TOPIC,
      numPartitions: 3,
      replicationFactor: 1,
      configs: { "cleanup.policy": "compact" },
    });
    expect(ensureMirrorStateTopic(cluster, 50)).toBe(3);
    const configs = cluster.controller.image.topic(MIRROR_STATE_TOPIC)?.configs;
    expect(configs?.get("delete.retention.ms")).toBe(MIRROR_STATE_DELETE_RETENTION_MS);
    expect(configs?.get("cleanup.policy")).toBe("compact");
    cluster.close();
  });
});
