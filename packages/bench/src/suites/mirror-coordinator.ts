import { MIRROR_STATE_TOPIC } from "@cluster-mirror/mirror";
import { decodeRecords } from "@cluster-mirror/protocol";
import { type BenchResult, type BenchSuite, result } from "../harness";
import { EngineEnv, MIRROR, type TopicGroup } from "./engine-env";

/**
 * The coordinator measured on the real path, through the public engine only (`ClusterMirroring` over
 * embedded clusters): `__mirror_state` with RF 3 and acks=all written by the engine, the real destination
 * (epoch bumps through the controller, abort markers, PID resets) and the engine's fetchers. Virtual time
 * (a manual scheduler), so what is timed is the engine's work, not its timers. Sizes can be lowered with
 * BENCH_COORDINATOR_PARTITIONS, BENCH_FAILOVER_PARTITIONS and BENCH_RUNS for a quick look. `pnpm bench` gives
 * Node an 8 GiB heap limit as headroom: at 100,000 partitions the source, destination and engine take about
 * 1.3 GB of heap and 2 GB of log buffers, and a load also holds the stopped engine's garbage. (Not measured
 * to change any figure.)
 */
const PARTITIONS = Number(process.env.BENCH_COORDINATOR_PARTITIONS ?? 100_000);
const FAILOVER_PARTITIONS = Number(process.env.BENCH_FAILOVER_PARTITIONS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** Partitions per topic: many partitions in few topics, as a large mirror has. */
const PER_TOPIC = 1000;
/**
 * Fetchers per source broker: Kafka's default (`num.replica.fetchers` = 1), so one fetcher holds every
 * partition, as a user's mirror of a one-broker source would. BENCH_FETCHERS changes it.
 */
const FETCHERS = Number(process.env.BENCH_FETCHERS ?? 1);
/** Logs of many batches: fewer partitions, so the batches fit in memory (it is the per-partition cost). */
const LONG_LOG_PARTITIONS = Number(process.env.BENCH_LONG_LOG_PARTITIONS ?? 20);
const LONG_LOG_BATCHES = 10_000;

const gc = (globalThis as { gc?: () => void }).gc;

/** Heap in use after full collections (0 when Node runs without --expose-gc: `pnpm bench` passes it). */
function heapUsed(): number {
  if (!gc) return 0;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** CPU time (user + system) in ms: the machine is shared, so wall time would measure the neighbours. */
function cpuMs(since?: NodeJS.CpuUsage): { ms: number; at: NodeJS.CpuUsage } {
  const at = process.cpuUsage();
  const used = since ? process.cpuUsage(since) : at;
  return { ms: (used.user + used.system) / 1000, at };
}

async function timedCpu(fn: () => Promise<void>): Promise<number> {
  const start = cpuMs();
  await fn();
  return cpuMs(start.at).ms;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function runsNote(values: readonly number[], unit: string): string {
  return `median of ${values.length}: ${values.map((v) => v.toFixed(v >= 100 ? 0 : 2)).join(", ")} ${unit}`;
}

function groupOf(prefix: string, partitions: number): TopicGroup {
  const perTopic = Math.min(PER_TOPIC, partitions);
  return { prefix, topics: Math.ceil(partitions / perTopic), partitionsPerTopic: perTopic };
}

/** Reads every `__mirror_state` record from the leaders' logs and folds it into a map: the floor of a load. */
function foldStateLog(env: EngineEnv): number {
  const start = cpuMs();
  const latest = new Map<string, Buffer | null>();
  for (let p = 0; p < env.options.numStatePartitions; p++) {
    for (const batch of env.leaderReplica(MIRROR_STATE_TOPIC, p).log.batches()) {
      for (const r of decodeRecords(batch)) latest.set(r.key?.toString("latin1") ?? "", r.value);
    }
  }
  return cpuMs(start.at).ms;
}

/** (a) load and heap, (b) persisted transitions: one coordinator owns every partition. */
async function loadAndTransitions(): Promise<BenchResult[]> {
  const group = groupOf("a_", PARTITIONS);
  const total = group.topics * group.partitionsPerTopic;
  const env = new EngineEnv({
    groups: [group],
    dataReplicationFactor: 1,
    numStatePartitions: 1,
    numReplicaFetchers: FETCHERS,
  });
  try {
    await env.mirrorAll();
    const keys = env.keys();
    const loads: number[] = [];
    const heaps: number[] = [];
    const folds: number[] = [];
    const unloads: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      // The engine stops on every broker and starts again: each broker's coordinator is elected for the
      // `__mirror_state` partitions it leads and loads them from the log the engine wrote.
      unloads.push(await timedCpu(async () => env.stopMirroring()));
      const before = heapUsed();
      loads.push(
        await timedCpu(async () => {
          const mirroring = env.startMirroring();
          await env.until(mirroring.whenCoordinatorsLoaded(keys.slice(0, 1), 600_000));
        }),
      );
      heaps.push((heapUsed() - before) / total);
      folds.push(foldStateLog(env));
    }
    if (env.countIn("MIRRORING") !== total) throw new Error("the load lost partitions");

    const rates: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const recordsBefore = env.stateRecords();
      const ms = await timedCpu(async () => {
        const c = env.mirroring.coordinators;
        await env.until(Promise.all(keys.map((k) => c.command(k, { type: "PAUSE" }))));
        await env.untilAllIn("PAUSED");
        await env.until(Promise.all(keys.map((k) => c.command(k, { type: "RESUME" }))));
        await env.untilAllIn("MIRRORING");
      });
      rates.push((Number(env.stateRecords() - recordsBefore) * 1000) / ms);
    }
    const label = total >= 1000 ? `${total / 1000}k` : String(total);
    return [
      result(
        `coordinator.load.${label}`,
        median(loads),
        "ms",
        median(folds),
        `CPU from election to ACTIVE, whole engine, ${FETCHERS} fetcher(s) per source broker; baseline: reading and folding the same __mirror_state records into a map; target <= 2000 ms; ${runsNote(loads, "ms")}`,
      ),
      result(
        `coordinator.unload.${label}`,
        median(unloads),
        "ms",
        median(loads),
        `CPU to stop the engine: every coordinator unloads, stopping its partition actors and fetchers; baseline: the load of the same partitions (no target; it was 1.7 s per 1,024 partitions before the groups shrank); ${runsNote(unloads, "ms")}`,
      ),
      result(
        `coordinator.heapPerPartition.${label}`,
        median(heaps),
        "B",
        4096,
        `heap of the whole engine (coordinators, fetchers, metadata) per partition after load, with --expose-gc; baseline is the target, 4 KiB; ${runsNote(heaps, "B")}`,
      ),
      result(
        "coordinator.persistedTransitions",
        median(rates),
        "ops/s",
        100_000,
        `__mirror_state records (RF 3, acks=all) per CPU second, PAUSE then RESUME of ${label} partitions; baseline is the target, 100,000/s; ${runsNote(rates, "/s")}`,
      ),
    ];
  } finally {
    env.close();
  }
}

/** (c) failover (remove = STOP) at RF 3: each run fails over a group of its own, real logs. */
async function failover(): Promise<BenchResult[]> {
  const groups = Array.from({ length: RUNS }, (_, i) => groupOf(`f${i}_`, FAILOVER_PARTITIONS));
  const short = Array.from({ length: RUNS }, (_, i) => groupOf(`s${i}_`, LONG_LOG_PARTITIONS));
  const long = Array.from({ length: RUNS }, (_, i) => groupOf(`l${i}_`, LONG_LOG_PARTITIONS));
  const env = new EngineEnv({
    groups: [...groups, ...short, ...long],
    dataReplicationFactor: 3,
    numStatePartitions: 3,
    numReplicaFetchers: FETCHERS,
  });
  try {
    await env.mirrorAll();
    for (const g of [...groups, ...short]) await env.fillLogs(g, 10);
    for (const g of long) await env.fillLogs(g, LONG_LOG_BATCHES);
    const failOver = async (g: TopicGroup) =>
      timedCpu(async () => {
        await env.until(env.mirroring.admin.removeTopics(MIRROR, `${g.prefix}.*`));
        await env.untilAllIn("STOPPED", g, 5);
      });
    const big: number[] = [];
    for (const g of groups) big.push(await failOver(g));
    const shortMs: number[] = [];
    for (const g of short) shortMs.push(await failOver(g));
    const longMs: number[] = [];
    for (const g of long) longMs.push(await failOver(g));
    const size = groups[0]!.topics * groups[0]!.partitionsPerTopic;
    const label = size >= 1000 ? `${size / 1000}k` : String(size);
    const few = short[0]!.topics * short[0]!.partitionsPerTopic;
    return [
      result(
        `coordinator.failover.${label}.rf3.logs10`,
        median(big),
        "ms",
        1000,
        `CPU from remove to all STOPPED, logs of 10 batches; baseline is the target, 1000 ms; ${runsNote(big, "ms")}`,
      ),
      result(
        `coordinator.failover.${few}.rf3.logs${LONG_LOG_BATCHES}`,
        median(longMs),
        "ms",
        median(shortMs),
        `logs of ${LONG_LOG_BATCHES} batches; baseline: the same failover with logs of 10 batches (failover must not depend on log length); ${runsNote(longMs, "ms")}`,
      ),
    ];
  } finally {
    env.close();
  }
}

/** The coordinator: load from `__mirror_state`, persisted transitions per second, failover of many partitions. */
export const suite: BenchSuite = {
  name: "mirror-coordinator",
  async run(): Promise<BenchResult[]> {
    return [...(await loadAndTransitions()), ...(await failover())];
  },
};
