import {
  type Clock,
  ClusterError,
  type KafkaCluster,
  type Random,
  type Scheduler,
} from "@cluster-mirror/cluster";
import type {
  MirrorPartitionCommand,
  MirrorPartitionEvent,
  RetryBackoffOptions,
} from "@cluster-mirror/machines";
import type { DestinationTopicLookup } from "../destination/embedded-destination";
import { MIRROR_STATE_TOPIC } from "../destination/embedded-state-log";
import { MIRROR_NAME_CONFIG, parseMirrorNameConfig } from "../metadata/mirror-topics";
import { commandFor, isStateRace } from "../metadata/state-driver";
import type {
  DestinationCluster,
  FetcherManager,
  MirrorPartitionKey,
  MirrorPartitionView,
  SourceCluster,
  StateLog,
} from "../ports";
import { CoordinatorShard, type MirrorStateWrite, refuseUnlessAtRest } from "./coordinator-shard";
import { DEFAULT_ISR_POLL_INTERVAL_MS } from "./effect-executor";
import type { InspectionHub } from "./inspection-hub";
import type { LeaderCatchUps } from "./leader-catch-ups";
import { mirrorStatePartitionFor } from "./mirror-state-partition";
import { DEFAULT_APPEND_LINGER_MS, DEFAULT_MAX_APPEND_BYTES } from "./state-write-batcher";

/** Settings and ports of one broker's coordinator runtime. */
export interface CoordinatorRuntimeOptions {
  readonly brokerId: number;
  /** The destination cluster, for this broker's `__mirror_state` leadership callbacks. */
  readonly cluster: Pick<KafkaCluster, "localBroker">;
  readonly destination: DestinationCluster;
  /** Topic name and `mirror.name` by topic id; defaults to `destination` when it implements them. */
  readonly topics?: DestinationTopicLookup;
  /** This broker's view of one `__mirror_state` partition. */
  readonly stateLogFor: (partition: number) => StateLog;
  readonly sources: (mirror: string) => SourceCluster;
  /** The source cluster id pinned for a mirror (written into MIRROR_PID_RESET). */
  readonly sourceClusterId: (mirror: string) => string;
  /** The fetcher manager of a destination broker; undefined when that broker is not running. */
  readonly fetchers: (brokerId: number) => FetcherManager | undefined;
  readonly clock: Clock;
  readonly random: Random;
  readonly scheduler: Scheduler;
  /** `mirror.topic.num.partitions`. */
  readonly numStatePartitions: number;
  /**
   * `mirror.coordinator.append.linger.ms`: -1 adaptive (the default: `__mirror_state` writes go out once the
   * current step's tasks ran), 0 no linger, or milliseconds to wait for more records.
   */
  readonly lingerMs?: number;
  /** Largest `__mirror_state` append (default 1,000,000 bytes). */
  readonly maxAppendBytes?: number;
  /** How often PREPARING checks that the ISR has truncated (default 100 ms). */
  readonly isrPollIntervalMs?: number;
  /** Retry backoff of FAILED partitions and of failed appends (default: the machine's). */
  readonly retry?: RetryBackoffOptions;
  /** Where load warnings go (a `__mirror_state` record of an unknown version); default console.warn. */
  readonly warn?: (message: string) => void;
  /** Called when a `__mirror_state` partition of this broker finished loading and serves commands. */
  readonly onShardActivated?: (partition: number) => void;
  /** XState's inspection of every shard's actors (the visualizer's live stream). */
  readonly inspection?: InspectionHub;
  /** Counts the retries that wait for a lagging destination leader's catch-up, over the cluster's shards. */
  readonly leaderCatchUps?: LeaderCatchUps;
  /** Whether a mirror's source did not answer this broker's last metadata refresh. */
  readonly sourceDown?: (mirror: string) => boolean;
  /** The mirrors whose source this broker's latest refresh found back after it had not answered. */
  readonly sourcesJustBack?: () => readonly string[];
}

/**
 * One broker's mirror coordinators (Kafka's `CoordinatorRuntime`): a `CoordinatorShard` per
 * `__mirror_state` partition, loaded when this broker becomes its leader and unloaded when it stops.
 * `start()` subscribes to the broker's leadership changes and loads the partitions it already leads.
 */
export class CoordinatorRuntime {
  readonly brokerId: number;
  private readonly shards = new Map<number, CoordinatorShard>();
  private unsubscribe: (() => void) | undefined;
  private readonly topics: DestinationTopicLookup;

  constructor(private readonly options: CoordinatorRuntimeOptions) {
    this.brokerId = options.brokerId;
    const lookup = options.topics ?? (options.destination as Partial<DestinationTopicLookup>);
    if (typeof lookup.topicName !== "function" || typeof lookup.topicConfig !== "function") {
      throw new TypeError(
        "CoordinatorRuntime needs `topics` (topic name by id, topic configs) when the destination does not implement them",
      );
    }
    this.topics = lookup as DestinationTopicLookup;
  }

  /** Follows this broker's `__mirror_state` leadership; loads the partitions it leads now. */
  start(): void {
    if (this.unsubscribe) return;
    const broker = this.options.cluster.localBroker(this.brokerId);
    if (!broker) {
      throw new ClusterError(
        "BROKER_NOT_AVAILABLE",
        `broker ${this.brokerId} is not running; start it before its coordinators`,
      );
    }
    this.unsubscribe = broker.onLeadershipChange((change) => {
      if (change.topic !== MIRROR_STATE_TOPIC) return;
      if (change.elected) this.onElection(change.partition, change.leaderEpoch);
      else this.onResignation(change.partition, change.leaderEpoch);
    });
    for (let p = 0; p < this.options.numStatePartitions; p++) {
      const replica = broker.replica(MIRROR_STATE_TOPIC, p);
      if (replica?.isLeader) this.onElection(p, replica.leaderEpoch);
    }
  }

  /** Stops following leadership and unloads every shard (the broker shuts down or crashed). */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const shard of this.shards.values()) shard.shutdown();
  }

  /** Kafka's `onElection`: load the partition (ignored unless `leaderEpoch` is newer). */
  onElection(partition: number, leaderEpoch: number): void {
    this.shard(partition).elected(leaderEpoch);
  }

  /** Kafka's `onResignation`: unload the partition. */
  onResignation(partition: number, leaderEpoch?: number): void {
    this.shards.get(partition)?.resigned(leaderEpoch);
  }

  /** The shard of a `__mirror_state` partition, if this broker ever led it. */
  shardFor(partition: number): CoordinatorShard | undefined {
    return this.shards.get(partition);
  }

  /** The shards that are ACTIVE on this broker. */
  activeShards(): CoordinatorShard[] {
    return [...this.shards.values()].filter((s) => s.state === "ACTIVE");
  }

  /** The `__mirror_state` partition that owns `key`. */
  statePartitionOf(key: MirrorPartitionKey): number {
    return mirrorStatePartitionFor(key, this.options.numStatePartitions);
  }

  /** Whether this broker's coordinator for `key` is ACTIVE. */
  owns(key: MirrorPartitionKey): boolean {
    return this.shards.get(this.statePartitionOf(key))?.state === "ACTIVE";
  }

  /** Sends a command to the partition's actor; NOT_COORDINATOR when this broker does not own it. */
  command(key: MirrorPartitionKey, command: MirrorPartitionCommand): Promise<void> {
    try {
      return this.requireShard(key).command(key, command);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Delivers a data-path observation to the partition's actor, if this broker owns it. */
  observe(key: MirrorPartitionKey, event: MirrorPartitionEvent): void {
    this.observeAt(this.statePartitionOf(key), key, event);
  }

  /** `observe` for a caller that already knows the key's `__mirror_state` partition (no second hash). */
  observeAt(partition: number, key: MirrorPartitionKey, event: MirrorPartitionEvent): void {
    this.shards.get(partition)?.observe(key, event);
  }

  /** Committed views of every partition this broker coordinates (of one mirror when given). */
  describe(mirror?: string): MirrorPartitionView[] {
    return this.activeShards().flatMap((s) => s.describe(mirror));
  }

  /**
   * Retries now the FAILED partitions of `mirror` this broker coordinates whose retry timer waits for the
   * source (`CoordinatorShard.retryFailedNow`): it answers again. Returns how many.
   */
  retryFailedNow(mirror: string): number {
    let retried = 0;
    // Every shard: one loading notes it (see `FaultEndsWhileLoading`).
    for (const shard of this.shards.values()) retried += shard.retryFailedNow(mirror);
    return retried;
  }

  /**
   * Retries now the FAILED partitions this broker coordinates whose retry timer waits for the destination's
   * controller, active again (`CoordinatorShard.retryControllerWaitsNow`). Returns how many.
   */
  retryControllerWaitsNow(): number {
    let retried = 0;
    for (const shard of this.shards.values()) retried += shard.retryControllerWaitsNow();
    return retried;
  }

  /** Retries `key` now if it is FAILED here and waits for a destination leader, which it has again; whether it did. */
  retryNow(key: MirrorPartitionKey): boolean {
    return this.shards.get(this.statePartitionOf(key))?.retryNow(key) ?? false;
  }

  /** See `CoordinatorShard.clearReadOnlyIfStopped`; nothing when this broker does not own the partition. */
  clearReadOnlyIfStopped(key: MirrorPartitionKey): boolean {
    return this.shards.get(this.statePartitionOf(key))?.clearReadOnlyIfStopped(key) ?? false;
  }

  /** Tombstones every partition of `mirror` this broker coordinates. */
  async tombstoneMirror(mirror: string): Promise<void> {
    const shards = this.activeShards();
    // Every shard's partitions at rest before any writes a tombstone (see the router's).
    refuseUnlessAtRest(
      mirror,
      shards.flatMap((s) => s.partitionsNotAtRest(mirror)),
    );
    await Promise.all(shards.map((s) => s.tombstoneMirror(mirror)));
  }

  /** ReadMirrorStates for keys owned by one `__mirror_state` partition (see `CoordinatorShard`). */
  readMirrorStates(
    partition: number,
    keys: readonly MirrorPartitionKey[],
    leaderEpoch?: number,
  ): { leaderEpoch: number; states: (MirrorPartitionView | undefined)[] } {
    return this.requireShardAt(partition).readMirrorStates(keys, leaderEpoch);
  }

  /** WriteMirrorStates for keys owned by one `__mirror_state` partition (see `CoordinatorShard`). */
  writeMirrorStates(
    partition: number,
    leaderEpoch: number,
    writes: readonly MirrorStateWrite[],
  ): Promise<{ key: MirrorPartitionKey; error?: Error }[]> {
    try {
      return this.requireShardAt(partition).writeMirrorStates(leaderEpoch, writes);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Right after a load, sends STOP to every recovered partition whose topic's `mirror.name` says removed
   * but whose state has not begun STOPPING (the broker died between `--remove`'s config write and its
   * STOP, e.g. killed half way): the failover the operator asked for resumes now, not at the metadata
   * manager's next refresh 30 s later, and the topic does not stay read-only meanwhile. The manager's
   * rule (`commandFor`), limited to failovers; other suffixes wait for the manager as before.
   */
  private followRemovals(shard: CoordinatorShard): void {
    const warn = this.options.warn ?? ((m: string) => console.warn(m));
    for (const view of shard.describe()) {
      const asked = parseMirrorNameConfig(this.topics.topicConfig(view.key.topic, MIRROR_NAME_CONFIG));
      if (asked?.mirror !== view.key.mirror || asked.desired !== "REMOVED") continue;
      if (commandFor("REMOVED", view) !== "STOP") continue;
      shard.command(view.key, { type: "STOP" }).catch((error: unknown) => {
        // A refusal because the partition already moved on is a race, not a fault; the manager's next
        // refresh retries anything else.
        if (!isStateRace(error)) {
          warn(
            `STOP for ${view.key.mirror}/${view.key.topic}-${view.key.partition} after loading __mirror_state-${shard.partition} failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      });
    }
  }

  private requireShard(key: MirrorPartitionKey): CoordinatorShard {
    return this.requireShardAt(this.statePartitionOf(key), key);
  }

  private requireShardAt(partition: number, key?: MirrorPartitionKey): CoordinatorShard {
    const shard = this.shards.get(partition);
    if (shard === undefined) {
      const what = key ? ` (owner of ${key.mirror}/${key.topic}-${key.partition})` : "";
      throw new ClusterError(
        "NOT_COORDINATOR",
        `broker ${this.brokerId} does not lead __mirror_state-${partition}${what}; send the request to that partition's leader`,
      );
    }
    return shard;
  }

  private shard(partition: number): CoordinatorShard {
    let shard = this.shards.get(partition);
    if (shard === undefined) {
      const o = this.options;
      shard = new CoordinatorShard({
        brokerId: o.brokerId,
        partition,
        stateLog: o.stateLogFor(partition),
        destination: o.destination,
        topics: this.topics,
        sources: o.sources,
        sourceClusterId: o.sourceClusterId,
        fetchers: o.fetchers,
        clock: o.clock,
        random: o.random,
        scheduler: o.scheduler,
        lingerMs: o.lingerMs ?? DEFAULT_APPEND_LINGER_MS,
        maxAppendBytes: o.maxAppendBytes ?? DEFAULT_MAX_APPEND_BYTES,
        isrPollIntervalMs: o.isrPollIntervalMs ?? DEFAULT_ISR_POLL_INTERVAL_MS,
        retry: o.retry,
        warn: o.warn ?? ((m) => console.warn(m)),
        ...(o.inspection ? { inspection: o.inspection } : {}),
        ...(o.leaderCatchUps ? { leaderCatchUps: o.leaderCatchUps } : {}),
        ...(o.sourceDown ? { sourceDown: o.sourceDown } : {}),
        ...(o.sourcesJustBack ? { sourcesJustBack: o.sourcesJustBack } : {}),
        onActivated: (loaded) => {
          this.followRemovals(loaded);
          o.onShardActivated?.(partition);
        },
      });
      this.shards.set(partition, shard);
    }
    return shard;
  }
}
