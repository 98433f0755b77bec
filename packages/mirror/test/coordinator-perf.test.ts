import { performance } from "node:perf_hooks";
import { ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { CoordinatorShard } from "../src/coordinator/coordinator-shard";
import { partitionStateRecord } from "../src/coordinator/state-records";
import type {
  DestinationCluster,
  LocalReplica,
  MirrorPartitionKey,
  StateLog,
  StateLogRecord,
} from "../src/ports";
import { FakeFetcherManager, flush } from "./core-helpers";

/** A StateLog in memory: append succeeds at once (measures the coordinator, not the cluster). */
class MemoryStateLog implements StateLog {
  readonly partition = 0;
  readonly records: StateLogRecord[] = [];
  appends = 0;
  async append(records: { key: Buffer; value: Buffer | null }[]): Promise<void> {
    this.appends++;
    for (const r of records) this.records.push({ offset: BigInt(this.records.length), ...r });
  }
  readAll(): StateLogRecord[] {
    return this.records;
  }
}

const replica = {
  leaderEpoch: () => 3,
  latestEpoch: () => 3,
  setReadOnly: () => {},
  ongoingTransactions: () => [],
  endsWithPidReset: () => true,
  appendControlBatch: () => {},
} as unknown as LocalReplica;

const destination: DestinationCluster = {
  clusterId: "dest",
  replica: () => replica,
  leaderOf: () => 0,
  createMirrorTopic: () => {},
  createPartitions: () => {},
  alterTopicConfigs: () => {},
  bumpLeaderEpochs: (reqs) => reqs.map((r) => r.minLeaderEpoch),
};

function topicId(i: number): string {
  return `00000000-0000-0000-0000-${i.toString(16).padStart(12, "0")}`;
}

function setup(log: MemoryStateLog, lingerMs = 10) {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const fetcher = new FakeFetcherManager(destination as never, 0);
  const shard = new CoordinatorShard({
    brokerId: 0,
    partition: 0,
    stateLog: log,
    destination,
    topics: { topicName: (id) => `t-${id.slice(-6)}`, topicConfig: () => "m" },
    sources: () => ({}) as never,
    sourceClusterId: () => "src",
    fetchers: () => fetcher,
    clock,
    random: new SeededRandom(1),
    scheduler,
    lingerMs,
    maxAppendBytes: 1_000_000,
    isrPollIntervalMs: 100,
    retry: undefined,
    warn: () => {},
  });
  const drive = async () => {
    for (let i = 0; i < 100; i++) {
      await flush();
      if (scheduler.run(lingerMs) === 0) {
        await flush();
        if (scheduler.run(lingerMs) === 0) return;
      }
    }
  };
  return { shard, scheduler, drive };
}

const N = Number(process.env.PERF_N ?? 2_000);
const FAILOVER = Math.min(10_000, N);

describe("coordinator measurements (printed, no timing assertions)", () => {
  it("load, persisted transitions per second, failover", async () => {
    const log = new MemoryStateLog();
    for (let i = 0; i < N; i++) {
      const key: MirrorPartitionKey = { mirror: "m", topic: "", topicId: topicId(i), partition: 0 };
      log.records.push({
        offset: BigInt(i),
        ...partitionStateRecord(key, {
          state: "MIRRORING",
          leaderEpoch: 3,
          stateEpoch: 2,
          errorMessage: null,
          retryAttempt: 0,
          previousState: "PREPARING",
        }),
      });
    }
    const a = setup(log);
    let t = performance.now();
    a.shard.elected(1);
    a.scheduler.run(0);
    const loadMs = performance.now() - t;
    expect(a.shard.state).toBe("ACTIVE");
    expect(a.shard.size).toBe(N);

    // Persisted transitions: PAUSE on every partition (MIRRORING -> PAUSING -> PAUSED), then RESUME.
    const keys = a.shard.describe().map((v) => v.key);
    t = performance.now();
    const appendsBefore = log.appends;
    const recordsBefore = log.records.length;
    const paused = keys.map((k) => a.shard.command(k, { type: "PAUSE" }));
    await a.drive();
    await Promise.all(paused);
    const resumed = keys.map((k) => a.shard.command(k, { type: "RESUME" }));
    await a.drive();
    await Promise.all(resumed);
    const transMs = performance.now() - t;
    const transitions = log.records.length - recordsBefore;
    expect(a.shard.describe().every((v) => v.state === "MIRRORING")).toBe(true);

    // Failover of 10,000 partitions: STOP -> STOPPED.
    const some = keys.slice(0, FAILOVER);
    t = performance.now();
    const stopped = some.map((k) => a.shard.command(k, { type: "STOP" }));
    await a.drive();
    await Promise.all(stopped);
    await a.drive();
    const failoverMs = performance.now() - t;
    const states = new Set(some.map((k) => a.shard.view(k)?.state));
    expect([...states]).toEqual(["STOPPED"]);
    console.log(
      `[coordinator] load ${N} partitions: ${loadMs.toFixed(0)} ms (target <= 2000)\n` +
        `[coordinator] persisted transitions: ${transitions} in ${transMs.toFixed(0)} ms = ${Math.round((transitions * 1000) / transMs)}/s over ${log.appends - appendsBefore} appends (target >= 100000/s)\n` +
        `[coordinator] failover of ${FAILOVER} partitions to STOPPED: ${failoverMs.toFixed(0)} ms (target <= 1000)`,
    );
  }, 120_000);
});
