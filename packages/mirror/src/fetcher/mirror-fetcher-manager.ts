import type { Clock, Random, Scheduler } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import type { InspectionHub } from "../coordinator/inspection-hub";
import type {
  DestinationCluster,
  FetcherEvents,
  FetcherManager,
  LocalReplica,
  MirrorPartitionKey,
  SourceCluster,
} from "../ports";
import { fetcherIndexFor, mirrorFetcherClientId } from "./client-id";
import { type FetchPartitionState, newFetchPartitionState } from "./fetch-partition-state";
import type { FetcherMetrics } from "./fetcher-metrics";
import { type FetcherHost, type FetchRoundConfig, MirrorFetcher } from "./mirror-fetcher";
import {
  type DestinationConfigs,
  isThrottledReplica,
  MIRROR_REPLICATION_THROTTLED_RATE,
  MIRROR_REPLICATION_THROTTLED_REPLICAS,
  ReplicationQuota,
  throttledRate,
} from "./replication-quota";

/** A mirror's fetcher settings (KIP-1279 mirror configs). */
export interface MirrorFetcherConfig {
  /** `mirror.num.replica.fetchers` (default 1): fetchers per source broker. */
  numFetchers: number;
  /** `fetch.response.max.bytes`: response size limit over all partitions. */
  maxBytes: number;
  /** `fetch.max.bytes`: per-partition limit. */
  partitionMaxBytes: number;
  /** `fetch.backoff.ms` (default 1000): wait after a whole fetch failed, and before re-routing. */
  backoffMs: number;
  /** Largest backoff after repeated failures (default `backoffMs`: a constant backoff, as Kafka). */
  backoffMaxMs?: number;
  /**
   * `fetch.wait.max.ms` (default 500): how long a round that brought nothing lasts before the next fetch
   * (the time the source held the fetch, long-polling, counts); at 0, `backoffMs` (and at least 1 ms), as
   * Kafka's fetcher backs off when it has nothing to fetch.
   */
  fetchWaitMaxMs?: number;
  /** `log.start.offset.sync.enable` (default true): the copy's log start follows the source's. */
  followLogStart?: boolean;
}

/** Constructor options of `MirrorFetcherManager`. */
export interface MirrorFetcherManagerOptions {
  /** The destination broker this manager runs on. */
  brokerId: number;
  destination: DestinationCluster;
  /** The source of each mirror (the metadata manager's connection). */
  sources: (mirror: string) => SourceCluster;
  /** The source topic-partition of a mirror partition (default: the same name and index). */
  sourcePartitionOf?: (key: MirrorPartitionKey) => { topic: string; partition: number };
  events: FetcherEvents;
  clock: Clock;
  scheduler: Scheduler;
  config: (mirror: string) => MirrorFetcherConfig;
  /** Destination throttle configs (spec §8), read every round; omitted: no destination throttle. */
  destinationConfigs?: DestinationConfigs;
  /** Jitter of the backoff after whole-fetch failures (default: none, the full backoff). */
  random?: Random;
  /** Hears every append (for the engine's metrics): the partition, bytes and batches mirrored. */
  onMirrored?: (key: MirrorPartitionKey, bytes: number, batches: number) => void;
  /** XState's inspection of the fetcher actors (the visualizer's live stream). */
  inspection?: InspectionHub;
  /** Hears every partition failure with the source's error name, if it answered one (after `events`). */
  onPartitionFailed?: (key: MirrorPartitionKey, errorName: string | undefined) => void;
  /**
   * Hears every whole fetch, and every leader lookup of the fetchers, that failed (the source did not
   * answer: refused, lost, timed out).
   */
  onFetchFailed?: (mirror: string) => void;
}

const NO_JITTER: Random = { next: () => 1 };

/**
 * The fetcher manager of one destination broker (spec §3): spawns a fetcher per (mirror, source broker,
 * fetcher index in [0, mirror.num.replica.fetchers)) and assigns each mirror partition to index
 * `hash(topic, partition) % n` of its source leader's broker. When the source leader moves (the source
 * answers NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH, or a whole fetch fails) it
 * refreshes the source metadata and moves the partition to the new broker's fetcher.
 */
export class MirrorFetcherManager implements FetcherManager {
  private readonly options: MirrorFetcherManagerOptions;
  private readonly partitions = new Map<string, FetchPartitionState>();
  private readonly fetchers = new Map<string, MirrorFetcher>();
  /** Source leaders by mirror, then `topic\0partition`. */
  private readonly leaders = new Map<string, Map<string, { leaderId: number; leaderEpoch: number }>>();
  private readonly refreshing = new Map<string, Promise<void>>();
  private readonly quota: ReplicationQuota;
  private readonly host: FetcherHost;
  private closed = false;
  private bytesTotal = 0;
  private batchesTotal = 0;

  constructor(options: MirrorFetcherManagerOptions) {
    this.options = options;
    this.quota = new ReplicationQuota(options.clock);
    this.host = this.createHost();
  }

  addPartition(key: MirrorPartitionKey, options: { leaderMoved?: boolean } = {}): void {
    if (this.closed) {
      throw new KafkaError(
        "BROKER_NOT_AVAILABLE",
        8,
        false,
        `the mirror fetcher manager of broker ${this.options.brokerId} is closed; start a new one to fetch ${key.topic}-${key.partition}`,
      );
    }
    const id = partitionId(key);
    let s = this.partitions.get(id);
    if (!s) {
      s = newFetchPartitionState(key, this.options.sourcePartitionOf?.(key) ?? key);
      this.partitions.set(id, s);
    }
    if (s.wanted && (s.fetcher || s.routing)) return;
    s.wanted = true;
    s.generation++;
    // Leadership moved here while the partition mirrors: the assignment that a retry started ran on the old
    // leader without failing, and its appends are not counted on this broker. A failure here is a new
    // incident (afterProgress), or a partition that mirrored on for months would still count the retries
    // of its last incident when its new leader fails before appending anything.
    s.batchesAtAdd = options.leaderMoved === true ? -1 : s.batchesMirrored;
    s.failure = undefined;
    s.corruptAt = undefined;
    s.checkedLogRewrite = -1;
    s.logRewriteCheck = undefined;
    s.logRewriteComparedTo = undefined;
    if (s.removing) return; // routed again once the removal is acknowledged
    this.route(s);
  }

  removePartition(key: MirrorPartitionKey): Promise<void> {
    const s = this.partitions.get(partitionId(key));
    if (!s) return Promise.resolve();
    s.wanted = false;
    s.held = false;
    this.cancelReroute(s);
    if (!s.fetcher) {
      this.partitions.delete(partitionId(key));
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      s.removeWaiters.push(() => resolve());
      if (!s.removing) {
        s.removing = true;
        s.fetcher?.remove([s.id]);
      }
    });
  }

  holdAppends(key: MirrorPartitionKey): void {
    const s = this.partitions.get(partitionId(key));
    if (s) s.held = true;
  }

  releaseAppends(key: MirrorPartitionKey): void {
    const s = this.partitions.get(partitionId(key));
    if (s) s.held = false;
  }

  offsets(
    key: MirrorPartitionKey,
  ): { sourceHighWatermark: bigint; destinationLogEndOffset: bigint } | undefined {
    const s = this.partitions.get(partitionId(key));
    if (!s || s.sourceHighWatermark < 0n) return undefined;
    // The local log end is read live: the last append's view is stale after truncation, or unknown (-1)
    // before the first append.
    const replica = this.options.destination.replica(this.options.brokerId, key.topic, key.partition);
    const destinationLogEndOffset = replica?.logEndOffset() ?? s.destinationLogEndOffset;
    return { sourceHighWatermark: s.sourceHighWatermark, destinationLogEndOffset };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.partitions.values()) {
      s.wanted = false;
      this.cancelReroute(s);
    }
    for (const f of this.fetchers.values()) f.stop();
    this.fetchers.clear();
    for (const s of this.partitions.values()) this.settleRemoval(s);
    this.partitions.clear();
  }

  /** Bytes and batches mirrored (total and per partition), lag per partition, and the fetchers. */
  metrics(): FetcherMetrics {
    const partitions = [...this.partitions.values()].map((s) => ({
      key: s.key,
      bytesMirrored: s.bytesMirrored,
      batchesMirrored: s.batchesMirrored,
      sourceHighWatermark: s.sourceHighWatermark,
      destinationLogEndOffset: s.destinationLogEndOffset,
      lag:
        s.sourceHighWatermark < 0n || s.destinationLogEndOffset < 0n
          ? -1n
          : maxBig(0n, s.sourceHighWatermark - s.destinationLogEndOffset),
      held: s.held,
    }));
    const fetchers = [...this.fetchers.values()].map((f) => ({
      clientId: f.clientId,
      mirror: f.mirror,
      sourceBrokerId: f.sourceBrokerId,
      index: f.index,
      state: f.state,
      partitions: f.partitionIds(),
    }));
    return { bytesMirrored: this.bytesTotal, batchesMirrored: this.batchesTotal, partitions, fetchers };
  }

  private round(mirror: string): FetchRoundConfig {
    const c = this.options.config(mirror);
    return {
      maxBytes: c.maxBytes,
      partitionMaxBytes: c.partitionMaxBytes,
      fetchWaitMaxMs: c.fetchWaitMaxMs ?? 500,
      fetchBackoffMs: c.backoffMs,
      followLogStart: c.followLogStart ?? true,
    };
  }

  /** Assigns the partition to its source leader's fetcher, refreshing the source metadata when unknown. */
  private route(s: FetchPartitionState, forceRefresh = false): void {
    if (!s.wanted || s.fetcher || this.closed) return;
    const known = this.leaders.get(s.key.mirror)?.get(leaderKey(s));
    if (known && known.leaderId >= 0 && !forceRefresh) {
      this.assign(s, known.leaderId, known.leaderEpoch);
      return;
    }
    s.routing = true;
    const generation = s.generation;
    void this.refresh(s.key.mirror).then(() => {
      if (s.generation !== generation || !s.wanted || s.fetcher || this.closed) return;
      s.routing = false;
      const leader = this.leaders.get(s.key.mirror)?.get(leaderKey(s));
      if (leader && leader.leaderId >= 0) this.assign(s, leader.leaderId, leader.leaderEpoch);
      else this.rerouteLater(s);
    });
  }

  private rerouteLater(s: FetchPartitionState): void {
    s.routing = true;
    s.rerouteCancel = this.options.scheduler.schedule(() => {
      s.rerouteCancel = undefined;
      s.routing = false;
      this.route(s, true);
    }, this.options.config(s.key.mirror).backoffMs);
  }

  private cancelReroute(s: FetchPartitionState): void {
    s.rerouteCancel?.();
    s.rerouteCancel = undefined;
    s.routing = false;
  }

  private assign(s: FetchPartitionState, leaderId: number, leaderEpoch: number): void {
    const config = this.options.config(s.key.mirror);
    const n = Math.max(1, config.numFetchers);
    const index = fetcherIndexFor(s.source.topic, s.source.partition, n);
    const fid = `${s.key.mirror}\u0000${leaderId}\u0000${index}`;
    let fetcher = this.fetchers.get(fid);
    if (!fetcher) {
      fetcher = new MirrorFetcher(
        s.key.mirror,
        leaderId,
        index,
        mirrorFetcherClientId(s.key.mirror, this.options.brokerId, index),
        this.host,
        { baseMs: config.backoffMs, capMs: config.backoffMaxMs ?? config.backoffMs, maxAttempts: 0 },
      );
      this.fetchers.set(fid, fetcher);
    }
    s.sourceLeaderId = leaderId;
    s.sourceLeaderEpoch = leaderEpoch;
    s.fetcher = fetcher;
    fetcher.add(s);
  }

  /**
   * One leader lookup per mirror at a time, for the source topics of its partitions here (a Metadata
   * request for them alone, as Kafka's fetchers ask for their own partitions); updates the leader cache.
   */
  private refresh(mirror: string): Promise<void> {
    const pending = this.refreshing.get(mirror);
    if (pending) return pending;
    const run = (async () => {
      try {
        const topics = new Set<string>();
        for (const s of this.partitions.values()) if (s.key.mirror === mirror) topics.add(s.source.topic);
        const leaders = await this.options.sources(mirror).partitionLeaders([...topics]);
        const map = new Map<string, { leaderId: number; leaderEpoch: number }>();
        for (const p of leaders)
          map.set(`${p.topic}\u0000${p.partition}`, { leaderId: p.leaderId, leaderEpoch: p.leaderEpoch });
        this.leaders.set(mirror, map);
      } catch {
        // The source is unreachable: partitions wait and are routed again after the backoff.
        this.options.onFetchFailed?.(mirror);
      } finally {
        this.refreshing.delete(mirror);
      }
    })();
    this.refreshing.set(mirror, run);
    return run;
  }

  private settleRemoval(s: FetchPartitionState): void {
    s.fetcher = undefined;
    s.removing = false;
    const waiters = s.removeWaiters.splice(0);
    for (const w of waiters) w();
  }

  private createHost(): FetcherHost {
    const o = this.options;
    return {
      scheduler: o.scheduler,
      clock: o.clock,
      random: o.random ?? NO_JITTER,
      events: o.events,
      ...(o.inspection ? { onActorSystem: (system) => o.inspection?.attach(system) ?? (() => {}) } : {}),
      source: (mirror) => o.sources(mirror),
      round: (mirror) => this.round(mirror),
      replica: (s): LocalReplica | undefined =>
        o.destination.replica(o.brokerId, s.key.topic, s.key.partition),
      throttledNow: (s, pendingBytes = 0) => {
        const configs = o.destinationConfigs;
        if (!configs) return false;
        const rate = throttledRate(configs.brokerConfig(o.brokerId, MIRROR_REPLICATION_THROTTLED_RATE));
        if (rate === undefined) return false;
        return this.host.isThrottledReplica(s) && this.quota.isQuotaExceeded(rate, pendingBytes);
      },
      isThrottledReplica: (s) => {
        const replicas = o.destinationConfigs?.topicConfig(
          s.key.topic,
          MIRROR_REPLICATION_THROTTLED_REPLICAS,
        );
        return isThrottledReplica(replicas, s.key.partition, o.brokerId);
      },
      recordAppended: (s, bytes, batches) => {
        this.bytesTotal += bytes;
        this.batchesTotal += batches;
        o.onMirrored?.(s.key, bytes, batches);
        if (this.host.isThrottledReplica(s)) this.quota.record(bytes);
      },
      removed: (states) => {
        for (const s of states) {
          this.settleRemoval(s);
          if (s.wanted) this.route(s);
          else if (this.partitions.get(partitionId(s.key)) === s) this.partitions.delete(partitionId(s.key));
        }
      },
      reroute: (states) => {
        for (const s of states) {
          s.fetcher = undefined;
          if (!s.wanted) {
            this.host.removed([s]);
            continue;
          }
          const before = { leaderId: s.sourceLeaderId, leaderEpoch: s.sourceLeaderEpoch };
          s.routing = true;
          const generation = s.generation;
          void this.refresh(s.key.mirror).then(() => {
            if (s.generation !== generation || !s.wanted || s.fetcher || this.closed) return;
            s.routing = false;
            const now = this.leaders.get(s.key.mirror)?.get(leaderKey(s));
            const moved =
              now &&
              now.leaderId >= 0 &&
              (now.leaderId !== before.leaderId || now.leaderEpoch !== before.leaderEpoch);
            if (moved) this.assign(s, now.leaderId, now.leaderEpoch);
            else this.rerouteLater(s);
          });
        }
      },
      failed: (states) => {
        for (const s of states) {
          // A failed partition stays known, unassigned, until the coordinator removes or adds it again.
          const failure = s.failure ?? { message: `${s.id} failed`, retryable: true };
          if (s.wanted) {
            o.events.partitionFailed(
              s.key,
              failure.message,
              failure.retryable,
              s.batchesMirrored > s.batchesAtAdd,
            );
            o.onPartitionFailed?.(s.key, failure.errorName);
          }
          this.settleRemoval(s);
          if (!s.wanted) this.partitions.delete(partitionId(s.key));
        }
      },
      fetchFailed: (fetcher) => {
        o.onFetchFailed?.(fetcher.mirror);
        void this.refresh(fetcher.mirror).then(() => {
          for (const s of this.partitions.values()) {
            if (s.fetcher !== fetcher || s.removing || !s.wanted) continue;
            const now = this.leaders.get(s.key.mirror)?.get(leaderKey(s));
            if (now && now.leaderId >= 0 && now.leaderId !== fetcher.sourceBrokerId) {
              // Move: the removal is acknowledged when no fetch includes it, then it is routed again.
              s.removing = true;
              fetcher.remove([s.id]);
            }
          }
        });
      },
    };
  }
}

function partitionId(key: MirrorPartitionKey): string {
  return `${key.mirror}\u0000${key.topic}\u0000${key.partition}`;
}

function leaderKey(s: FetchPartitionState): string {
  return `${s.source.topic}\u0000${s.source.partition}`;
}

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
