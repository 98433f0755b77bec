import { ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import {
  CoordinatorShard,
  type DestinationCluster,
  type FetcherManager,
  type LocalReplica,
  type MirrorPartitionKey,
  partitionStateRecord,
  type StateLog,
  type StateLogRecord,
} from "@cluster-mirror/mirror";
import { type BenchResult, type BenchSuite, result, timeOnceMs } from "../harness";

/** A `__mirror_state` partition in memory: appends succeed at once, so the coordinator is what is measured. */
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
  leaderEpochOf: () => 0,
  createMirrorTopic: () => {},
  createPartitions: () => {},
  alterTopicConfigs: () => {},
  bumpLeaderEpochs: (reqs) => reqs.map((r) => r.minLeaderEpoch),
};

const fetchers: FetcherManager = {
  addPartition: () => {},
  removePartition: async () => ({ latestMirroredEpoch: 3 }),
  holdAppends: () => {},
  releaseAppends: () => {},
  offsets: () => undefined,
  close: () => {},
};

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function topicId(i: number): string {
  return `00000000-0000-0000-0000-${i.toString(16).padStart(12, "0")}`;
}

function shardOver(log: MemoryStateLog) {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const shard = new CoordinatorShard({
    brokerId: 0,
    partition: 0,
    stateLog: log,
    destination,
    topics: { topicName: (id) => `t-${id.slice(-6)}`, topicConfig: () => "m" },
    sources: () => ({}) as never,
    sourceClusterId: () => "src",
    fetchers: () => fetchers,
    clock,
    random: new SeededRandom(1),
    scheduler,
    lingerMs: 10,
    maxAppendBytes: 1_000_000,
    isrPollIntervalMs: 100,
    retry: undefined,
    warn: () => {},
  });
  const drive = async () => {
    for (let i = 0; i < 1000; i++) {
      await flush();
      if (scheduler.run(10) === 0) {
        await flush();
        if (scheduler.run(10) === 0) return;
      }
    }
  };
  return { shard, scheduler, drive };
}

function mirroringRecords(n: number): MemoryStateLog {
  const log = new MemoryStateLog();
  for (let i = 0; i < n; i++) {
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
  return log;
}

/** The coordinator: load from `__mirror_state`, persisted transitions per second, failover of many partitions. */
export const suite: BenchSuite = {
  name: "mirror-coordinator",
  async run(): Promise<BenchResult[]> {
    const N = 100_000;
    const log = mirroringRecords(N);
    const baselineMs = timeOnceMs(() => {
      // Baseline: just decoding and folding the same records into a map, no partition actors.
      const map = new Map<string, Buffer | null>();
      for (const r of log.readAll()) map.set(r.key.toString("hex"), r.value);
    });
    const a = shardOver(log);
    const loadMs = timeOnceMs(() => {
      a.shard.elected(1);
      a.scheduler.run(0);
    });

    const keys = a.shard.describe().map((v) => v.key);
    const before = log.records.length;
    let start = performance.now();
    const paused = keys.map((k) => a.shard.command(k, { type: "PAUSE" }));
    await a.drive();
    await Promise.all(paused);
    const resumed = keys.map((k) => a.shard.command(k, { type: "RESUME" }));
    await a.drive();
    await Promise.all(resumed);
    const transMs = performance.now() - start;
    const transitions = log.records.length - before;

    const some = keys.slice(0, 10_000);
    start = performance.now();
    const stopped = some.map((k) => a.shard.command(k, { type: "STOP" }));
    await a.drive();
    await Promise.all(stopped);
    await a.drive();
    const failoverMs = performance.now() - start;
    const allStopped = some.every((k) => a.shard.view(k)?.state === "STOPPED");

    return [
      result(
        "coordinator.load.100k",
        loadMs,
        "ms",
        baselineMs,
        "baseline: folding the records into a map; target <= 2000 ms",
      ),
      result(
        "coordinator.persistedTransitions",
        (transitions * 1000) / transMs,
        "ops/s",
        100_000,
        `${transitions} records in ${log.appends} appends; baseline is the target, 100,000/s`,
      ),
      result(
        "coordinator.failover.10k",
        failoverMs,
        "ms",
        1000,
        `remove to all STOPPED (${allStopped ? "all STOPPED" : "NOT all stopped"}); baseline is the target, 1000 ms`,
      ),
    ];
  },
};
