import { KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import { encodeRecordBatch, RecordBatch, type RecordBatchInput } from "@cluster-mirror/protocol";
import { EmbeddedDestination } from "../src/destination/embedded-destination";
import { type MirrorFetcherConfig, MirrorFetcherManager } from "../src/fetcher/mirror-fetcher-manager";
import { destinationConfigsOf } from "../src/fetcher/replication-quota";
import type { FetcherEvents, MirrorPartitionKey, SourceCluster } from "../src/ports";
import { EmbeddedSourceCluster, type EmbeddedSourceOptions } from "../src/source/embedded-source";
import { appendSourceTransactional } from "./source-txn-batch";

/** What the fetchers reported, in order. */
export interface RecordedEvents extends FetcherEvents {
  epochs: { key: MirrorPartitionKey; batchEpoch: number; localLeaderEpoch: number }[];
  failures: { key: MirrorPartitionKey; message: string; retryable: boolean }[];
}

export function recordingEvents(): RecordedEvents {
  const epochs: RecordedEvents["epochs"] = [];
  const failures: RecordedEvents["failures"] = [];
  return {
    epochs,
    failures,
    epochObserved: (key, batchEpoch, localLeaderEpoch) => epochs.push({ key, batchEpoch, localLeaderEpoch }),
    partitionFailed: (key, message, retryable) => failures.push({ key, message, retryable }),
  };
}

/** Options of `mirrorEnv`. */
export interface MirrorEnvOptions {
  sourceBrokers?: number;
  destinationBrokers?: number;
  /** Source replica assignment of the topic (default [[0]] per partition). */
  sourceAssignment?: number[][];
  sourceConfigs?: Record<string, string>;
  /** Destination replica assignment of the mirror topic (default [[0]] per source partition). */
  destinationAssignment?: number[][];
  config?: Partial<MirrorFetcherConfig>;
  /** Wraps the source the fetchers see (fault injection). */
  wrapSource?: (source: SourceCluster) => SourceCluster;
  /** Options of the embedded source (e.g. `copyOnFetch`). */
  sourceOptions?: EmbeddedSourceOptions;
}

export const MIRROR = "m1";
export const TOPIC = "orders";

/**
 * Two embedded clusters on one manual clock and scheduler, a source topic and its mirror topic on the
 * destination (same id, `mirror.name` set), and a fetcher manager on destination broker 0.
 */
export function mirrorEnv(options: MirrorEnvOptions = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const source = KafkaCluster.start({
    brokers: options.sourceBrokers ?? 1,
    clock,
    scheduler,
    random: new SeededRandom(1),
    clusterId: "source-cluster-id-00001",
  });
  const destination = KafkaCluster.start({
    brokers: options.destinationBrokers ?? 1,
    clock,
    scheduler,
    random: new SeededRandom(2),
    clusterId: "destination-cluster-id1",
  });
  const assignment = options.sourceAssignment ?? [[0]];
  const topicId = source.controller.createTopic({
    name: TOPIC,
    replicaAssignment: assignment,
    configs: options.sourceConfigs ?? {},
  });
  destination.controller.createTopic({
    name: TOPIC,
    topicId,
    replicaAssignment: options.destinationAssignment ?? assignment.map(() => [0]),
    configs: { "mirror.name": MIRROR },
  });
  const events = recordingEvents();
  const embeddedSource = new EmbeddedSourceCluster(source, options.sourceOptions);
  const sourceView = options.wrapSource ? options.wrapSource(embeddedSource) : embeddedSource;
  const config: MirrorFetcherConfig = {
    numFetchers: 1,
    maxBytes: 10 * 1024 * 1024,
    partitionMaxBytes: 1024 * 1024,
    backoffMs: 1000,
    fetchWaitMaxMs: 500,
    ...options.config,
  };
  const manager = new MirrorFetcherManager({
    brokerId: 0,
    destination: new EmbeddedDestination(destination),
    sources: () => sourceView,
    events,
    clock,
    scheduler,
    config: () => config,
    destinationConfigs: destinationConfigsOf(destination.controller.image),
  });
  const key = (partition = 0): MirrorPartitionKey => ({ mirror: MIRROR, topic: TOPIC, topicId, partition });
  return { clock, scheduler, source, destination, topicId, events, manager, key, config, embeddedSource };
}

export type MirrorEnv = ReturnType<typeof mirrorEnv>;

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs the shared scheduler for `ms` of virtual time, 1 ms at a time, letting promise continuations (the
 * source's fetch answers) run between steps, so the fetch loop advances as it would on an event loop.
 */
export async function drive(
  env: { clock: ManualClock; scheduler: ManualScheduler },
  ms: number,
): Promise<void> {
  const until = env.clock.now() + ms;
  for (;;) {
    await flush();
    if (env.scheduler.run(0) > 0) continue;
    await flush();
    if (env.scheduler.run(0) > 0) continue;
    if (env.clock.now() >= until) return;
    env.scheduler.run(1);
  }
}

/** Produces one batch to the source leader (acks=1) and returns its base offset. */
export async function produce(
  env: MirrorEnv,
  batch: Buffer,
  partition = 0,
  extra: { transactionalId?: string } = {},
): Promise<bigint> {
  const leader = env.source.leaderFor(TOPIC, partition);
  // A transactional batch of the test's own producer id: stored as the source keeps one (no coordinator).
  if (new RecordBatch(batch).isTransactional && extra.transactionalId === undefined)
    return appendSourceTransactional(leader, TOPIC, partition, batch);
  const response = await leader.produce({ topic: TOPIC, partition, batch, acks: 1, ...extra });
  return response.baseOffset;
}

/** A batch of string values (optionally keyed), with the given producer fields. */
export function valuesBatch(
  values: string[],
  fields: Omit<RecordBatchInput, "records"> = {},
  keys?: string[],
): Buffer {
  return encodeRecordBatch({
    baseTimestamp: 1_700_000_000_000n,
    ...fields,
    records: values.map((v, i) => ({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: BigInt(i),
      key: keys?.[i] === undefined ? null : Buffer.from(keys[i]!),
      value: Buffer.from(v),
      headers: [],
    })),
  });
}

/** Throttles `replicas` (default every replica) of the topic on destination broker 0 to `rate` bytes/s. */
export function throttleMirrorReplication(env: MirrorEnv, rate: number, replicas = "*"): void {
  env.destination.controller.incrementalAlterConfigs({ type: "broker", name: "0" }, [
    { name: "mirror.replication.throttled.rate", op: "SET", value: String(rate) },
  ]);
  env.destination.controller.incrementalAlterConfigs({ type: "topic", name: TOPIC }, [
    { name: "mirror.replication.throttled.replicas", op: "SET", value: replicas },
  ]);
}

/** Every batch of the partition's leader log on a cluster. */
export function leaderBatches(cluster: KafkaCluster, partition = 0): RecordBatch[] {
  const broker = cluster.leaderFor(TOPIC, partition);
  return [...broker.replica(TOPIC, partition)!.log.batches()];
}

/** The leader log of a partition on a cluster. */
export function leaderLog(cluster: KafkaCluster, partition = 0) {
  return cluster.leaderFor(TOPIC, partition).replica(TOPIC, partition)!.log;
}

/** [baseOffset, hex] of every batch from `from`: compares two logs byte for byte. */
export function batchBytes(cluster: KafkaCluster, partition = 0, from = -1n): [string, string][] {
  return leaderBatches(cluster, partition)
    .filter((b) => b.baseOffset >= from)
    .map((b) => [b.baseOffset.toString(), b.buffer.toString("hex")]);
}

/** The methods of a source, bound, so a test can override some of them with a spread. */
export function bind(s: SourceCluster): SourceCluster {
  return {
    clusterId: () => s.clusterId(),
    describeTopics: (options) => s.describeTopics(options),
    partitionLeaders: (topics) => s.partitionLeaders(topics),
    fetch: (r) => s.fetch(r),
    listOffsets: (t, p, ts) => s.listOffsets(t, p, ts),
    endOffsetForEpoch: (t, p, e) => s.endOffsetForEpoch(t, p, e),
    listGroupOffsets: () => s.listGroupOffsets(),
    describeAcls: () => s.describeAcls(),
    lastMirrorEpoch: (id, p) => s.lastMirrorEpoch(id, p),
    listMirrors: (options) => s.listMirrors(options),
  };
}
