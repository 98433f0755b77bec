import {
  type Cancel,
  ClusterError,
  type KafkaCluster,
  type LeadershipChange,
  murmur2,
  type Random,
  toPositive,
} from "@cluster-mirror/cluster";
import { isLifecycleState, LIFECYCLE_STATES, type RetryBackoffOptions } from "@cluster-mirror/machines";
import type { MirrorDescribeRow } from "./admin/describe-format";
import { MirroringClosedError, MirrorWaitTimeoutError, UnknownMirrorError } from "./admin/errors";
import { MirrorAdmin } from "./admin/mirror-admin";
import { announceAppends, MirrorChanges } from "./admin/mirror-changes";
import { parseMirrorConfig } from "./admin/mirror-config";
import { liveSourceHighWatermark } from "./admin/mirror-describe";
import { checkMillis } from "./admin/option-checks";
import {
  CoordinatorLoadWaiters,
  DEFAULT_COORDINATOR_LOAD_TIMEOUT_MS,
} from "./coordinator/coordinator-load-waiters";
import { CoordinatorRuntime } from "./coordinator/coordinator-runtime";
import { InspectionHub, type MirrorInspector } from "./coordinator/inspection-hub";
import { LeaderCatchUps } from "./coordinator/leader-catch-ups";
import { MirrorCoordinatorRouter } from "./coordinator/mirror-coordinators";
import { checkAppendLingerMs } from "./coordinator/state-write-batcher";
import { committedTransitions, type TransitionListener } from "./coordinator/transition-listener";
import { EmbeddedDestination } from "./destination/embedded-destination";
import {
  DEFAULT_MIRROR_STATE_PARTITIONS,
  EmbeddedStateLog,
  ensureMirrorStateTopic,
  MIRROR_STATE_TOPIC,
} from "./destination/embedded-state-log";
import { type MirrorFetcherConfig, MirrorFetcherManager } from "./fetcher/mirror-fetcher-manager";
import { destinationConfigsOf } from "./fetcher/replication-quota";
import { leaderLog } from "./metadata/destination-logs";
import { MirrorMetadataManager, type RefreshReport } from "./metadata/mirror-metadata-manager";
import { MIRROR_NAME_CONFIG, mirrorTopics, parseMirrorNameConfig } from "./metadata/mirror-topics";
import { SourceConnections } from "./metadata/source-connections";
import { SyncWaiters } from "./metadata/sync-waiters";
import { MirrorMetrics } from "./metrics/mirror-metrics";
import type { FetcherManager, MirrorPartitionKey, SourceConnector } from "./ports";
import type { EmbeddedSourceOptions } from "./source/embedded-source";
import { listMirrorsWithUpstream } from "./source/mirror-listing";
import { checkStartOptions } from "./start-options";

/**
 * What a warning of the engine is about: a metadata sync error (also counted in
 * `kafka_server_cluster_mirror_sync_errors_total`), a matched source topic not mirrored because the name is
 * taken here, or a source connection's own error line.
 */
export type MirrorWarningKind = "sync_error" | "topic_skipped" | "source_connection";

/** Settings of the mirroring engine on one destination cluster. */
export interface ClusterMirroringOptions {
  /** The destination cluster: mirroring runs inside its brokers. */
  cluster: KafkaCluster;
  /** Opens a mirror's source from its definition (`bootstrap.servers`...). */
  sources: SourceConnector;
  /** Jitter for retries and backoffs. */
  random: Random;
  /**
   * `mirror.topic.num.partitions`: partitions of `__mirror_state` when this start creates it (default
   * {@link DEFAULT_MIRROR_STATE_PARTITIONS}). Like `offsets.topic.num.partitions`, it is fixed once the
   * topic exists: an existing `__mirror_state` keeps its count (a warning says so when they differ).
   */
  numStatePartitions?: number;
  /**
   * `mirror.coordinator.append.linger.ms`: -1 adaptive (the default: `__mirror_state` writes go out once the
   * current step's tasks ran), 0 no linger, or milliseconds to wait for more records.
   */
  lingerMs?: number;
  /** Retry backoff of FAILED partitions (default: the machine's, 1 s doubling to 300 s, 10 attempts). */
  retry?: RetryBackoffOptions;
  /** Fetch settings shared by every mirror (the fetcher count comes from each mirror's definition). */
  fetch?: Partial<Omit<MirrorFetcherConfig, "numFetchers">>;
  /**
   * Where warnings go (unknown `__mirror_state` record versions, sync errors, skipped topics), with what kind
   * of warning each is where that is known (for a log's event name).
   */
  warn?: (message: string, kind?: MirrorWarningKind) => void;
  /**
   * How long an admin operation (add, remove, pause, resume topics) waits for the coordinators of its
   * partitions to load their `__mirror_state` partitions, e.g. right after `start`, before it fails with a
   * retriable COORDINATOR_NOT_AVAILABLE naming them (default {@link DEFAULT_COORDINATOR_LOAD_TIMEOUT_MS}).
   */
  coordinatorLoadTimeoutMs?: number;
  /**
   * Kafka's `default.api.timeout.ms`: how long an admin operation (add, remove, pause, resume, recover
   * topics) waits for the mirror coordinators to record its commands in `__mirror_state` (every disk there
   * full: never) before it fails with a retriable MirrorCommandTimeoutError, which says the change may still
   * take effect (default `DEFAULT_API_TIMEOUT_MS`, 60 s).
   */
  defaultApiTimeoutMs?: number;
  /**
   * Told of every committed record change of every mirror partition, from the start (see
   * {@link ClusterMirroring.subscribeTransitions}). It keeps XState's inspection on for the engine's lifetime.
   */
  onTransition?: TransitionListener;
}

/** What runs inside one destination broker: its coordinators, fetchers and metadata manager. */
interface MirrorNode {
  runtime: CoordinatorRuntime;
  fetchers: MirrorFetcherManager;
  metadata: MirrorMetadataManager;
  unsubscribe: () => void;
}

/** States in which a mirror partition's leader runs a fetcher for it. */
const FETCHING_STATES = new Set(["MIRRORING", "EPOCH_FENCING"]);

const FETCH_DEFAULTS: Omit<MirrorFetcherConfig, "numFetchers"> = {
  maxBytes: 50 * 1024 * 1024,
  partitionMaxBytes: 1024 * 1024,
  backoffMs: 1000,
};

/** The clusters a (not yet closed) ClusterMirroring runs on: one engine per cluster. */
const RUNNING = new WeakMap<KafkaCluster, ClusterMirroring>();

/**
 * Cluster mirroring on an embedded destination cluster (KIP-1279): wires, in every running broker, the
 * coordinator runtime over `__mirror_state`, the fetcher manager and the metadata manager, and follows the
 * brokers as they start, stop and crash (what runs in a broker dies with it and is rebuilt from
 * `__mirror_state` by whoever leads its partitions next). `admin` is the operator surface.
 */
export class ClusterMirroring {
  /** Create, list and delete mirrors; add, remove, pause and resume topics; describe. */
  readonly admin: MirrorAdmin;
  /** Routes partition commands and reads to the coordinator that owns each partition. */
  readonly coordinators: MirrorCoordinatorRouter;
  /** Partitions per state, lag, sync errors, bytes and batches mirrored. */
  readonly metrics: MirrorMetrics;
  readonly destination: EmbeddedDestination;
  /** Announces committed partition states and mirrored appends (what promote waits on). */
  readonly changes: MirrorChanges;
  private readonly options: ClusterMirroringOptions;
  private readonly inspection = new InspectionHub();
  /** The retries of this cluster's coordinators that wait for a lagging leader's catch-up, counted. */
  private readonly leaderCatchUps = new LeaderCatchUps();
  private readonly sources: SourceConnections;
  private readonly nodes = new Map<number, MirrorNode>();
  private readonly numStatePartitions: number;
  private readonly loadWaiters: CoordinatorLoadWaiters;
  /** Pending waits of `waitFor`: each ends (rejected) when close() is called. */
  private readonly waits = new Set<(error: Error) => void>();
  /** Set by close(): every wait rejects with it. */
  private closedWith: Error | undefined;
  private readonly syncWaiters: SyncWaiters;
  private unsubscribe: (() => void) | undefined;

  private constructor(options: ClusterMirroringOptions, numStatePartitions: number) {
    this.options = options;
    this.numStatePartitions = numStatePartitions;
    this.destination = new EmbeddedDestination(options.cluster);
    if (options.onTransition) this.subscribeTransitions(options.onTransition);
    this.sources = new SourceConnections(options.sources);
    this.coordinators = new MirrorCoordinatorRouter(
      this.destination,
      this.numStatePartitions,
      options.random,
    );
    this.loadWaiters = new CoordinatorLoadWaiters(
      {
        statusOf: (key) => this.coordinators.loadStatusOf(key),
        allActive: () => this.coordinators.allActive(),
      },
      options.cluster.scheduler,
    );
    this.syncWaiters = new SyncWaiters(options.cluster.scheduler, () => [
      ...options.cluster.controller.image.mirrors.keys(),
    ]);
    this.metrics = new MirrorMetrics({
      coordinators: this.coordinators,
      offsets: (key) => this.fetcherOf(key)?.offsets(key),
      destinationLogEndOffset: (key) => leaderLog(options.cluster, key.topic, key.partition)?.logEndOffset,
      liveSourceHighWatermark: (key) =>
        liveSourceHighWatermark({ destination: options.cluster, sources: this.sources }, key),
      destinationTopicId: (topic) => options.cluster.controller.image.topic(topic)?.topicId,
    });
    this.changes = new MirrorChanges(options.cluster.scheduler);
    this.admin = new MirrorAdmin({
      destination: options.cluster,
      changes: this.changes,
      sources: this.sources,
      coordinators: this.coordinators,
      offsets: (key) => this.fetcherOf(key)?.offsets(key),
      awaitCoordinators: (keys) => this.whenCoordinatorsLoaded(keys),
      onMirrorAltered: (mirror) => this.refreshSoon(mirror, true),
      syncBeforePromote: (mirror) => this.refreshNow(mirror),
      closed: () => this.closedWith,
      defaultApiTimeoutMs: options.defaultApiTimeoutMs,
    });
  }

  /**
   * Resolves once the coordinators owning `keys` serve commands (their `__mirror_state` partitions are
   * loaded): at once when they already do, else on the shard activation that completes them. Rejects with a
   * retriable COORDINATOR_NOT_AVAILABLE after `timeoutMs` (default `coordinatorLoadTimeoutMs`). The admin
   * operations call it themselves; it is public for callers that command coordinators directly.
   */
  whenCoordinatorsLoaded(
    keys: readonly MirrorPartitionKey[],
    timeoutMs = this.options.coordinatorLoadTimeoutMs ?? DEFAULT_COORDINATOR_LOAD_TIMEOUT_MS,
  ): Promise<void> {
    return this.loadWaiters.whenLoaded(keys, timeoutMs);
  }

  /** Starts mirroring on every running broker of `options.cluster` (creating `__mirror_state` if needed). */
  static start(options: ClusterMirroringOptions): ClusterMirroring {
    // First: with no options at all, the checks below would fail as a TypeError.
    checkStartOptions(options as unknown as Readonly<Record<string, unknown>>);
    if (RUNNING.has(options.cluster)) {
      // Two engines would both coordinate and fetch the same partitions, racing on every append.
      throw new ClusterError(
        "INVALID_REQUEST",
        `mirroring is already started on this cluster (cluster id ${options.cluster.clusterId}); close() that ClusterMirroring before starting another`,
      );
    }
    if (options.lingerMs !== undefined) checkAppendLingerMs(options.lingerMs);
    const requested = options.numStatePartitions ?? DEFAULT_MIRROR_STATE_PARTITIONS;
    // Every key's coordinator is hash % partition count: routing by any other count than the topic's
    // own would send commands to partitions nobody coordinates for them (NOT_COORDINATOR forever).
    const actual = ensureMirrorStateTopic(options.cluster, requested);
    if (actual !== requested) {
      (options.warn ?? ((m: string) => console.warn(m)))(
        `${MIRROR_STATE_TOPIC} already exists with ${actual} partitions; mirror.topic.num.partitions=${requested} is ignored (the partition count of ${MIRROR_STATE_TOPIC} cannot change once created)`,
      );
    }
    const mirroring = new ClusterMirroring(options, actual);
    RUNNING.set(options.cluster, mirroring);
    for (const id of options.cluster.runningBrokers()) mirroring.attach(id);
    mirroring.unsubscribe = options.cluster.onBrokerChange((id, running) => {
      if (running) mirroring.attach(id);
      else mirroring.detach(id);
    });
    return mirroring;
  }

  /**
   * Calls `listener` on every committed record change of every mirror partition this cluster coordinates
   * (synchronously, once the partition actor applied the commit); returns the function that stops it. A
   * view of {@link inspect}: the partition actors' snapshots whose committed record changed.
   */
  subscribeTransitions(listener: TransitionListener): () => void {
    const warn = this.options.warn ?? ((m: string) => console.warn(m));
    return this.inspect(
      committedTransitions(
        listener,
        (topicId) => this.destination.topicName(topicId),
        (error) => warn(`a transition listener threw: ${String(error)}`),
      ),
    );
  }

  /** The fetcher manager of a running broker. */
  fetchers(brokerId: number): FetcherManager | undefined {
    return this.nodes.get(brokerId)?.fetchers;
  }

  /** Bytes and batches mirrored, lag and fetcher states of every running broker's fetchers. */
  fetcherMetrics() {
    return [...this.nodes].map(([brokerId, node]) => ({ brokerId, ...node.fetchers.metrics() }));
  }

  /**
   * What this cluster answers when another cluster mirrors from it (failback, chains): the LME it
   * recorded for a partition when it failed over, and the mirrors it runs (for mirror-loop detection).
   * Pass it to `EmbeddedSourceRegistry.register(bootstrap, cluster, mirroring.asSource())`.
   */
  asSource(): EmbeddedSourceOptions {
    return {
      // The LME of the mirror the topic's `mirror.name` names (with or without its suffix): the topic's
      // latest failover, whichever mirrors held it before. None (an ordinary topic, or its mirror was
      // deleted, with its LMEs): -1. From the coordinator that owns the key; a retriable error, never -1,
      // while it is loading or not elected (-1 would make the caller truncate fully). A topic removed from
      // its mirror here is failing over until STOPPED: a retriable error then too.
      lastMirrorEpoch: (topicId, partition) => {
        const topic = this.options.cluster.controller.image.topicsById.get(topicId);
        const owner = parseMirrorNameConfig(topic?.configs.get(MIRROR_NAME_CONFIG));
        if (owner === undefined || !this.options.cluster.controller.image.mirrors.has(owner.mirror))
          return -1;
        return this.coordinators.lastMirrorEpochOf(
          { mirror: owner.mirror, removed: owner.desired === "REMOVED" },
          topicId,
          partition,
        );
      },
      // With each topic's upstream clusters (asked of each mirror's source), so a loop of any length shows.
      listMirrors: (options) =>
        listMirrorsWithUpstream(
          this.options.cluster.clusterId,
          this.admin
            .storedMirrors()
            .map((m) => ({ name: m.name, sourceClusterId: m.sourceClusterId, topics: m.topics })),
          (mirror) => {
            const stored = this.options.cluster.controller.image.mirrors.get(mirror);
            return stored === undefined ? undefined : this.sources.get(mirror, stored);
          },
          options,
        ),
    };
  }

  /**
   * The catch-up barrier of a planned failover: resolves once every partition of `mirror` is MIRRORING and
   * its destination log end has reached the source high watermark the source answered when this was
   * called (ListOffsets latest, asked at once and again until the source answers), and its destination
   * high watermark too (the destination's in-sync replicas hold them), so every record the source
   * acknowledged before the call is on the destination, durably. A failed-over partition (STOPPED, its topic
   * removed from the mirror) is no longer the mirror's and is left out. Checks every `intervalMs` on the cluster's scheduler; rejects after
   * `timeoutMs` naming the laggards, or saying that the mirror has no partition to catch up.
   */
  whenCaughtUp(mirror: string, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<void> {
    // The fetchers' last-seen high watermark is not enough: it trails the source by a fetch round, so
    // records acknowledged just before the call would count as mirrored and a failover would lose them.
    const barriers = new Map<string, bigint>();
    const id = (r: { topic: string; partition: number }) => `${r.topic}\u0000${r.partition}`;
    return this.waitFor(async () => {
      const removed = new Set(
        mirrorTopics(this.options.cluster.controller.image, mirror)
          .filter((t) => t.desired === "REMOVED")
          .map((t) => t.name),
      );
      const rows = (await this.admin.describe(mirror)).filter(
        (r) => !(r.state === "STOPPED" && removed.has(r.topic)),
      );
      if (rows.length === 0) {
        return `mirror ${mirror} has no partition to catch up (no topics, or all failed over): add topics with addTopics (kafka-mirrors --add)`;
      }
      await Promise.all(
        rows
          .filter((r) => !barriers.has(id(r)))
          .map(async (r) => {
            const hw = await liveSourceHighWatermark(
              { destination: this.options.cluster, sources: this.sources },
              { mirror, topic: r.topic, partition: r.partition },
            );
            if (hw !== null) barriers.set(id(r), hw);
          }),
      );
      // Copied means held by the destination's in-sync replicas (its high watermark), not only appended on
      // its leader: a leader lost before its followers fetched would take the records with it.
      const replicated = (r: MirrorDescribeRow) =>
        leaderLog(this.options.cluster, r.topic, r.partition)?.highWatermark ?? null;
      const behind = rows.filter((r) => {
        const barrier = barriers.get(id(r));
        const hw = replicated(r);
        return r.state !== "MIRRORING" || barrier === undefined || hw === null || hw < barrier;
      });
      const show = (r: MirrorDescribeRow) => {
        // Nothing is copied to a partition without a leader: say so, not only an unknown lag.
        if (leaderLog(this.options.cluster, r.topic, r.partition) === undefined)
          return `${r.topic}-${r.partition} ${r.state} has no leader on the destination, so nothing is copied to it: start a broker of its in-sync replicas (or set unclean.leader.election.enable=true on the topic, losing what only they held)`;
        const barrier = barriers.get(id(r));
        const hw = replicated(r);
        const lag =
          barrier === undefined || r.destinationOffset === null ? "?" : String(barrier - r.destinationOffset);
        const unreplicated =
          barrier !== undefined &&
          hw !== null &&
          r.destinationOffset !== null &&
          r.destinationOffset >= barrier
            ? `, high watermark ${hw} (not yet replicated to the ISR)`
            : "";
        return `${r.topic}-${r.partition} ${r.state} lag ${lag}${unreplicated}`;
      };
      return behind.length === 0
        ? undefined
        : `${behind.length} of ${rows.length} partitions of mirror ${mirror} not caught up to the source's high watermark at the call (${behind
            .slice(0, 3)
            .map(show)
            .join(", ")})`;
    }, options);
  }

  /** Resolves once every partition of `mirror` (optionally only of `topic`) is in `state`. */
  whenState(
    mirror: string,
    state: string,
    options: { topic?: string; timeoutMs?: number; intervalMs?: number } = {},
  ): Promise<void> {
    // A name no partition can ever be in would only run out the timeout.
    if (!isLifecycleState(state) || state === "UNKNOWN") {
      const states = LIFECYCLE_STATES.filter((s) => s !== "UNKNOWN");
      const close = states.find((s) => s === state.toUpperCase());
      return Promise.reject(
        new ClusterError(
          "INVALID_REQUEST",
          `'${state}' is not a mirror partition state${close ? `; did you mean '${close}'?` : ""} (states: ${states.join(", ")})`,
        ),
      );
    }
    return this.waitFor(async () => {
      const rows = (await this.admin.describe(mirror)).filter(
        (r) => !options.topic || r.topic === options.topic,
      );
      const other = rows.filter((r) => r.state !== state);
      return other.length === 0 && rows.length > 0
        ? undefined
        : `${other.length} of ${rows.length} partitions of mirror ${mirror} not ${state} (${other
            .slice(0, 3)
            .map((r) => `${r.topic}-${r.partition} ${r.state}`)
            .join(", ")})`;
    }, options);
  }

  /**
   * Observes XState's inspection events of every coordinator and fetcher actor on every broker, present and
   * future: each shard (`__mirror_state-N`), its mirror groups (`mirror:NAME#i`) and partition actors
   * (`MIRROR/TOPIC_ID/PARTITION`), the fetchers, the events they receive and the snapshots they move to. A
   * shard is observed while it leads its partition (from its election until it resigns or its broker stops),
   * a fetcher while it runs. Returns the function that stops observing. With no observer, the actors build
   * no inspection events.
   */
  inspect(observer: MirrorInspector): () => void {
    return this.inspection.inspect(observer);
  }

  /**
   * Resolves with the report of the next full metadata sync of `mirror` (topic discovery, partition counts,
   * configs, group offsets, ACLs and the partition commands, run by the broker leading the mirror's
   * `__mirror_state` partition) that starts after this call: the periodic one every
   * `mirror.metadata.refresh.interval.ms`, or one that {@link refreshNow} starts. Rejects with
   * REQUEST_TIMED_OUT after `timeoutMs` (default 120 s), UNKNOWN_MIRROR when the mirror is (or gets) deleted.
   * Sync errors do not reject: they are in the report's `errors` (and the sync-error metrics).
   */
  async whenSynced(mirror: string, options: { timeoutMs?: number } = {}): Promise<RefreshReport> {
    checkMillis("timeoutMs", options.timeoutMs);
    this.requireMirror(mirror);
    return this.syncWaiters.next(mirror, options.timeoutMs ?? 120_000);
  }

  /**
   * Runs a full metadata sync of `mirror` now on the broker leading it and resolves with its report, instead
   * of waiting up to `mirror.metadata.refresh.interval.ms`: a sync already running (begun before the call)
   * is awaited and a new one runs after it. Waits first for the mirror's coordinators to load (bounded by
   * `coordinatorLoadTimeoutMs`). UNKNOWN_MIRROR when the mirror does not exist; COORDINATOR_NOT_AVAILABLE
   * when no running broker leads its `__mirror_state` partition.
   */
  async refreshNow(mirror: string): Promise<RefreshReport> {
    this.requireMirror(mirror);
    const keys = mirrorTopics(this.options.cluster.controller.image, mirror).flatMap((t) =>
      Array.from({ length: t.partitionCount }, (_, partition) => ({
        mirror,
        topic: t.name,
        topicId: t.topicId,
        partition,
      })),
    );
    await this.whenCoordinatorsLoaded(keys);
    const statePartition = this.mirrorStatePartition(mirror);
    const leader = this.destination.leaderOf(MIRROR_STATE_TOPIC, statePartition);
    const node = this.nodes.get(leader);
    if (!node) {
      throw new ClusterError(
        "COORDINATOR_NOT_AVAILABLE",
        `no running broker leads __mirror_state-${statePartition}, whose leader syncs mirror '${mirror}'; start a broker holding a replica of it, then retry`,
      );
    }
    const report = await node.metadata.refreshAfterCurrent(mirror);
    if (report === undefined) this.requireMirror(mirror);
    if (report === undefined || !report.leader) {
      throw new ClusterError(
        "NOT_COORDINATOR",
        `leadership of __mirror_state-${statePartition} moved while mirror '${mirror}' was syncing; retry`,
      );
    }
    return report;
  }

  private requireMirror(mirror: string): void {
    const mirrors = this.options.cluster.controller.image.mirrors;
    if (!mirrors.has(mirror)) throw new UnknownMirrorError(mirror, [...mirrors.keys()]);
  }

  /** Polls `check` (undefined = done, else why not) on the cluster's scheduler until done or timed out. */
  private waitFor(
    check: () => Promise<string | undefined>,
    { timeoutMs = 60_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number },
  ): Promise<void> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    try {
      checkMillis("timeoutMs", timeoutMs);
      checkMillis("intervalMs", intervalMs);
    } catch (error) {
      return Promise.reject(error);
    }
    const { clock, scheduler } = this.options.cluster;
    const deadline = clock.now() + timeoutMs;
    return new Promise((resolve, reject) => {
      let next: Cancel | undefined;
      // close() ends the wait at once, its timer included: nothing keeps the process alive after it.
      const abort = (error: Error) => {
        next?.();
        reject(error);
      };
      this.waits.add(abort);
      const finish = (settle: () => void) => {
        if (!this.waits.delete(abort)) return;
        settle();
      };
      const poll = () => {
        next = undefined;
        check().then(
          (notYet) => {
            if (!this.waits.has(abort)) return;
            if (notYet === undefined) finish(resolve);
            else if (clock.now() >= deadline)
              finish(() => reject(new MirrorWaitTimeoutError(timeoutMs, notYet)));
            else next = scheduler.schedule(poll, intervalMs);
          },
          (error: unknown) => finish(() => reject(error)),
        );
      };
      poll();
    });
  }

  /** Stops every broker's mirroring (the cluster keeps running). */
  close(): void {
    if (!this.closedWith) {
      const closed = new MirroringClosedError();
      this.closedWith = closed;
      for (const abort of [...this.waits]) abort(closed);
      this.waits.clear();
      this.syncWaiters.closeAll(closed);
      this.loadWaiters.closeAll(closed);
      // A promote waiting on the engine's changes checks again now, and ends with `closed`.
      this.changes.notify();
    }
    this.unsubscribe?.();
    for (const id of [...this.nodes.keys()]) this.detach(id);
    if (RUNNING.get(this.options.cluster) === this) RUNNING.delete(this.options.cluster);
  }

  private attach(brokerId: number): void {
    if (this.nodes.has(brokerId)) return;
    const { cluster, random } = this.options;
    // Parsed once per definition: the image replaces a mirror's configs object on every change.
    const parsed = new WeakMap<object, ReturnType<typeof parseMirrorConfig>>();
    const definition = (mirror: string) => {
      const configs = cluster.controller.image.mirrors.get(mirror);
      if (!configs) return undefined;
      let d = parsed.get(configs);
      if (d === undefined) {
        d = parseMirrorConfig(mirror, configs);
        parsed.set(configs, d);
      }
      return d;
    };
    const sourceOf = (mirror: string) => {
      const configs = cluster.controller.image.mirrors.get(mirror);
      if (!configs) throw new Error(`mirror '${mirror}' does not exist (it was deleted)`);
      return this.sources.get(mirror, configs);
    };
    const fetchers = new MirrorFetcherManager({
      brokerId,
      inspection: this.inspection,
      destination: this.destination,
      sources: sourceOf,
      events: this.coordinators,
      clock: cluster.clock,
      scheduler: cluster.scheduler,
      random,
      config: (mirror) => ({
        ...FETCH_DEFAULTS,
        ...this.options.fetch,
        numFetchers: definition(mirror)?.numReplicaFetchers ?? 1,
        followLogStart: definition(mirror)?.logStartOffsetSyncEnable ?? false,
      }),
      destinationConfigs: destinationConfigsOf(cluster.controller.image),
      // The source no longer has the mirrored topic's id (deleted, or deleted and created again): refresh
      // the mirror's metadata now, which fails the topic for good, instead of retrying it until the next
      // refresh interval (up to 30 s of FAILED -> MIRRORING -> FAILED).
      onPartitionFailed: (key, errorName) => {
        this.metrics.recordFetchError(key.mirror);
        if (errorName === "UNKNOWN_TOPIC_ID") this.refreshSoon(key.mirror);
      },
      onFetchFailed: (mirror) => this.metrics.recordFetchError(mirror),
      onMirrored: (key, bytes, batches) => {
        this.metrics.recordMirrored(key, bytes, batches);
        this.changes.notify();
      },
    });
    const runtime = new CoordinatorRuntime({
      brokerId,
      cluster,
      destination: this.destination,
      stateLogFor: (p) => announceAppends(new EmbeddedStateLog(cluster, brokerId, p), this.changes),
      sources: sourceOf,
      sourceClusterId: (mirror) => definition(mirror)?.sourceClusterId ?? "",
      fetchers: (id) => this.nodes.get(id)?.fetchers,
      clock: cluster.clock,
      random,
      scheduler: cluster.scheduler,
      numStatePartitions: this.numStatePartitions,
      lingerMs: this.options.lingerMs,
      retry: this.options.retry,
      warn: this.options.warn,
      inspection: this.inspection,
      leaderCatchUps: this.leaderCatchUps,
      // A FAILED partition a coordinator loads does not retry for a source back while it loaded that this
      // broker found down again since (see `FaultEndsWhileLoading`).
      sourceDown: (mirror) => metadata.isSourceDown(mirror),
      sourcesJustBack: () => metadata.sourcesJustBack(),
      // The broker that leads a mirror's designated partition drives its topics as soon as it loads it.
      onShardActivated: (partition) => {
        this.loadWaiters.changed();
        for (const mirror of cluster.controller.image.mirrors.keys()) {
          if (this.mirrorStatePartition(mirror) === partition) void metadata.driveAfterLoad(mirror);
        }
      },
    });
    const metadata = new MirrorMetadataManager({
      destination: cluster,
      sources: this.sources,
      coordinators: this.coordinators,
      scheduler: cluster.scheduler,
      leadsMirror: (mirror) =>
        this.destination.leaderOf(MIRROR_STATE_TOPIC, this.mirrorStatePartition(mirror)) === brokerId,
      metrics: this.metrics,
      onSyncError: (mirror, kind, error) =>
        this.options.warn?.(`mirror ${mirror}: ${kind}: ${String(error)}`, "sync_error"),
      onTopicSkipped: (mirror, _topic, why) =>
        this.options.warn?.(`mirror ${mirror}: ${why}`, "topic_skipped"),
      onRefreshStarted: (mirror) => this.syncWaiters.refreshStarted(mirror),
      // The source answers again after it did not: the FAILED partitions this broker coordinates that wait
      // for it retry now, not up to the backoff's 5 minutes later.
      onSourceBack: (mirror) => runtime.retryFailedNow(mirror),
    });
    // The fetcher of a mirror partition runs on its leader: when leadership moves, the new leader starts
    // fetching (if the partition is mirroring) and the old one stops, whoever coordinates its state.
    const broker = cluster.localBroker(brokerId);
    const followLeadership = (change: LeadershipChange): void => {
      // A leader epoch bump of a partition this broker keeps leading (every partition of a failover gets
      // one) leaves its fetcher as it is: nothing to look up (it cost a regex and two key hashes each).
      // Unless a FAILED waits for a leader that lagged the metadata's epoch to catch up, which that leader
      // does by taking the epoch it lagged (its owed cut made once its disk was freed): looked up then.
      if (change.epochBump && !this.leaderCatchUps.awaited) return;
      const configured = cluster.controller.image.topic(change.topic)?.configs.get(MIRROR_NAME_CONFIG);
      const mirror = parseMirrorNameConfig(configured)?.mirror;
      if (mirror === undefined) return;
      const key = { mirror, topic: change.topic, topicId: change.topicId, partition: change.partition };
      if (change.epochBump) {
        if (this.coordinators.viewOf(key)?.state === "FAILED") this.coordinators.retryNow(key);
        return;
      }
      if (!change.elected) {
        void fetchers.removePartition(key);
        return;
      }
      const view = this.coordinators.viewOf(key);
      if (view && FETCHING_STATES.has(view.state)) fetchers.addPartition(key, { leaderMoved: true });
      // A FAILED partition that waits for a leader retries as soon as it has one again (a broker back, an
      // election), not up to the backoff's 5 minutes later. Only that one: a leader moving does not end
      // another fault (the source down), and each retry uses one of the budget's attempts.
      else if (view?.state === "FAILED") this.coordinators.retryNow(key);
    };
    const unfollowLeadership = broker?.onLeadershipChange(followLeadership) ?? (() => {});
    // The destination's controller active again after it had none: the FAILED partitions this broker
    // coordinates whose step it refused (NOT_CONTROLLER) retry now, not up to the backoff's 5 minutes later.
    const unfollowController = this.destination.onControllerActive(() => runtime.retryControllerWaitsNow());
    const unsubscribe = (): void => {
      unfollowLeadership();
      unfollowController();
    };
    // The broker started before this attach: partitions it was elected to lead while starting (the last
    // in-sync replica of an offline partition) are followed now, or a mirroring one would have no fetcher
    // until its coordinator reloads.
    for (const p of broker?.replicas() ?? []) {
      if (!p.isLeader) continue;
      const { topic, topicId, partition, leaderEpoch } = p;
      followLeadership({ topic, topicId, partition, leaderEpoch, elected: true, epochBump: false });
    }
    this.nodes.set(brokerId, { runtime, fetchers, metadata, unsubscribe });
    this.coordinators.register(runtime);
    runtime.start();
    metadata.start();
    this.loadWaiters.changed();
  }

  private detach(brokerId: number): void {
    const node = this.nodes.get(brokerId);
    if (!node) return;
    this.nodes.delete(brokerId);
    node.unsubscribe();
    node.metadata.close();
    node.runtime.close();
    node.fetchers.close();
    this.coordinators.unregister(brokerId);
    this.loadWaiters.changed();
  }

  /**
   * Starts a metadata refresh of `mirror` on the broker that does its metadata work (the leader of its
   * `__mirror_state` partition; nothing when no running broker leads it). A refresh running there is joined,
   * or (`afterCurrent`, for a change it may have read the mirror before) awaited and followed by a new one.
   */
  private refreshSoon(mirror: string, afterCurrent = false): void {
    const leader = this.destination.leaderOf(MIRROR_STATE_TOPIC, this.mirrorStatePartition(mirror));
    const metadata = this.nodes.get(leader)?.metadata;
    void (afterCurrent ? metadata?.refreshAfterCurrent(mirror) : metadata?.refresh(mirror));
  }

  /** The `__mirror_state` partition whose leader does a mirror's metadata work: abs(murmur2(name)) % N. */
  private mirrorStatePartition(mirror: string): number {
    return toPositive(murmur2(Buffer.from(mirror, "utf8"))) % this.numStatePartitions;
  }

  private fetcherOf(key: MirrorPartitionKey): MirrorFetcherManager | undefined {
    const leader = this.destination.leaderOf(key.topic, key.partition);
    return this.nodes.get(leader)?.fetchers;
  }
}
