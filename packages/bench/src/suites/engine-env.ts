import {
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  type Partition,
  SeededRandom,
} from "@cluster-mirror/cluster";
import {
  ClusterMirroring,
  EmbeddedSourceConnector,
  EmbeddedSourceRegistry,
  MIRROR_STATE_TOPIC,
  type MirrorPartitionKey,
} from "@cluster-mirror/mirror";
import { encodeRecordBatch } from "@cluster-mirror/protocol";

/** Not a suite: the embedded source and destination the coordinator suite drives through the public engine. */
export const MIRROR = "m";
const SOURCE_BOOTSTRAP = "source:9092";

/** A group of source topics, `<prefix>0`, `<prefix>1`..., each with `partitionsPerTopic` partitions. */
export interface TopicGroup {
  prefix: string;
  topics: number;
  partitionsPerTopic: number;
}

/** Settings of an engine environment. */
export interface EngineEnvOptions {
  groups: readonly TopicGroup[];
  /** Replication factor of the mirror topics on the destination (`default.replication.factor`). */
  dataReplicationFactor: number;
  /** `__mirror_state` partitions (RF 3 on the 3 destination brokers). */
  numStatePartitions: number;
  /** `mirror.num.replica.fetchers`: fetchers per source broker. */
  numReplicaFetchers: number;
}

/**
 * A 1-broker source and a 3-broker destination on one manual clock and scheduler (virtual time, so the
 * wall time measured is the engine's CPU, not its timers), with `ClusterMirroring` on the destination and a
 * mirror `m` of the source. Everything goes through public APIs: the embedded clusters, `ClusterMirroring`
 * and its `admin` and `coordinators`.
 */
export class EngineEnv {
  readonly clock = new ManualClock(1_700_000_000_000);
  readonly scheduler = new ManualScheduler(this.clock);
  readonly source: KafkaCluster;
  readonly destination: KafkaCluster;
  readonly registry = new EmbeddedSourceRegistry();
  private running: ClusterMirroring | undefined;

  constructor(readonly options: EngineEnvOptions) {
    this.source = KafkaCluster.start({
      brokers: 1,
      clock: this.clock,
      scheduler: this.scheduler,
      random: new SeededRandom(1),
      clusterId: "source-cluster-id-00001",
    });
    this.destination = KafkaCluster.start({
      brokers: 3,
      clock: this.clock,
      scheduler: this.scheduler,
      random: new SeededRandom(2),
      clusterId: "destination-cluster-id1",
    });
    this.registry.register(SOURCE_BOOTSTRAP, this.source);
    for (const g of options.groups) {
      for (let t = 0; t < g.topics; t++) {
        this.source.controller.createTopic({
          name: `${g.prefix}${t}`,
          numPartitions: g.partitionsPerTopic,
          replicationFactor: 1,
        });
      }
    }
    this.startMirroring();
  }

  /** The engine running on the destination. */
  get mirroring(): ClusterMirroring {
    if (!this.running) throw new Error("mirroring is stopped; startMirroring() first");
    return this.running;
  }

  /** Stops the engine on every broker and drops it, so that nothing of it stays reachable. */
  stopMirroring(): void {
    this.running?.close();
    this.running = undefined;
  }

  /** Starts the engine on every running destination broker (it loads `__mirror_state` as it is elected). */
  startMirroring(): ClusterMirroring {
    this.running = ClusterMirroring.start({
      cluster: this.destination,
      sources: new EmbeddedSourceConnector(this.registry),
      random: new SeededRandom(3),
      numStatePartitions: this.options.numStatePartitions,
      // A quiet source: fetchers back off between empty fetches instead of spinning in virtual time.
      fetch: { backoffMs: 1000 },
      warn: () => {},
    });
    return this.running;
  }

  /** Creates the mirror and adds every source topic; resolves when every partition is MIRRORING. */
  async mirrorAll(): Promise<void> {
    await this.until(
      this.mirroring.admin.createMirror(MIRROR, {
        "bootstrap.servers": SOURCE_BOOTSTRAP,
        "default.replication.factor": String(this.options.dataReplicationFactor),
        "mirror.num.replica.fetchers": String(this.options.numReplicaFetchers),
      }),
    );
    await this.until(this.mirroring.whenCoordinatorsLoaded(this.keys(), 600_000));
    await this.until(this.mirroring.admin.addTopics(MIRROR, ".*"));
    await this.untilAllIn("MIRRORING");
  }

  /** The mirror partitions' keys (of one group, or of all). */
  keys(group?: TopicGroup): MirrorPartitionKey[] {
    const out: MirrorPartitionKey[] = [];
    for (const g of group ? [group] : this.options.groups) {
      for (let t = 0; t < g.topics; t++) {
        const topic = this.source.controller.image.topic(`${g.prefix}${t}`)!;
        for (let p = 0; p < g.partitionsPerTopic; p++) {
          out.push({ mirror: MIRROR, topic: topic.name, topicId: topic.topicId, partition: p });
        }
      }
    }
    return out;
  }

  /** Records in `__mirror_state` (every partition's log end on its leader): one per persisted transition. */
  stateRecords(): bigint {
    let total = 0n;
    for (let p = 0; p < this.options.numStatePartitions; p++) {
      total += this.leaderReplica(MIRROR_STATE_TOPIC, p).log.logEndOffset;
    }
    return total;
  }

  /**
   * Writes `batches` one-record batches to every partition of `group` on the source (appended on the
   * leader as they are, far cheaper than a produce each) and runs the engine until the destination
   * leaders hold them all: logs of that many real batches, mirrored by the engine.
   */
  async fillLogs(group: TopicGroup, batches: number): Promise<void> {
    const bytes = sourceBatches(batches);
    const keys = this.keys(group);
    for (const k of keys) this.source.leaderFor(k.topic, k.partition).appendAsIs(k.topic, k.partition, bytes);
    const want = BigInt(batches);
    let next = 0;
    await this.runUntil(
      () => {
        while (
          next < keys.length &&
          this.leaderReplica(keys[next]!.topic, keys[next]!.partition).log.logEndOffset >= want
        )
          next++;
        return next === keys.length;
      },
      50,
      3_600_000,
      () => `${next} of ${keys.length} partitions mirrored ${batches} batches`,
    );
  }

  leaderReplica(topic: string, partition: number): Partition {
    return this.destination.leaderFor(topic, partition).replica(topic, partition)!;
  }

  /** Partitions of the mirror (of one group, or all) in `state`, from the coordinators' committed views. */
  countIn(state: string, group?: TopicGroup): number {
    let n = 0;
    for (const v of this.mirroring.coordinators.describe(MIRROR)) {
      if (v.state === state && (!group || v.key.topic.startsWith(group.prefix))) n++;
    }
    return n;
  }

  /** Runs the engine until every partition of the mirror (of one group, or all) is in `state`. */
  untilAllIn(state: string, group?: TopicGroup, pollMs = 20, maxMs = 3_600_000): Promise<void> {
    const total = (group ? [group] : this.options.groups).reduce(
      (n, g) => n + g.topics * g.partitionsPerTopic,
      0,
    );
    return this.runUntil(
      () => this.countIn(state, group) === total,
      pollMs,
      maxMs,
      () => {
        return `${this.countIn(state, group)} of ${total} partitions ${state}`;
      },
    );
  }

  /** Awaits `promise` while running the scheduler (promise continuations in between). */
  async until<T>(promise: Promise<T>, maxMs = 3_600_000): Promise<T> {
    let settled = false;
    const watched = promise.finally(() => {
      settled = true;
    });
    watched.catch(() => {});
    await this.runUntil(
      () => settled,
      0,
      maxMs,
      () => "a promise still pending",
    );
    return watched;
  }

  /**
   * Runs due tasks and promise continuations; when nothing is due, checks `done` (at most every `pollMs` of
   * virtual time) and jumps the clock to the next due task (or `pollMs` on). Throws after `maxMs` of
   * virtual time.
   */
  async runUntil(done: () => boolean, pollMs: number, maxMs: number, why: () => string): Promise<void> {
    const until = this.clock.now() + maxMs;
    let nextPoll = this.clock.now();
    for (;;) {
      await flush();
      if (this.scheduler.run(0) > 0) continue;
      await flush();
      if (this.scheduler.run(0) > 0) continue;
      if (this.clock.now() >= nextPoll) {
        if (done()) return;
        nextPoll = this.clock.now() + pollMs;
      }
      if (this.clock.now() >= until)
        throw new Error(`still waiting after ${maxMs} ms of virtual time: ${why()}`);
      const next = this.scheduler.nextDue ?? this.clock.now() + Math.max(1, pollMs);
      this.scheduler.run(Math.max(1, Math.min(next, nextPoll) - this.clock.now()));
    }
  }

  close(): void {
    this.stopMirroring();
    this.destination.close();
    this.source.close();
  }
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `count` one-record batches at offsets 0..count-1, as one buffer (a producer's batches, already offset). */
export function sourceBatches(count: number): Buffer {
  const batches: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    batches.push(
      encodeRecordBatch({
        baseOffset: BigInt(i),
        partitionLeaderEpoch: 0,
        baseTimestamp: 1_700_000_000_000n,
        records: [
          {
            attributes: 0,
            timestampDelta: 0n,
            offsetDelta: 0,
            key: Buffer.from(`k${i}`),
            value: Buffer.from(`value-${i}`),
            headers: [],
          },
        ],
      }),
    );
  }
  return Buffer.concat(batches);
}
