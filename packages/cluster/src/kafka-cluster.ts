import { FileHandleCache } from "@cluster-mirror/log";
import { encodeEndTxnMarkerBatch, KafkaError } from "@cluster-mirror/protocol";
import * as path from "#platform/path";
import { Authorizer, type AuthorizerConfig } from "./acls";
import { Broker, type BrokerNetwork } from "./broker";
import { ClientQuotaManager } from "./client-quotas";
import type { Clock } from "./clock";
import { checkClusterOptionKeys } from "./cluster-start-options";
import { Controller } from "./controller";
import { type DataDir, FileDataDir, MemoryDataDir } from "./data-dir";
import { DataDirLock } from "./data-dir-lock";
import { ClusterClosedError, ClusterError, requireLatencyMs } from "./errors";
import { GroupCoordinator, type GroupCoordinatorOptions } from "./group-coordinator";
import { type HeldTxnMarker, HeldTxnMarkers, type TransactionState } from "./held-txn-markers";
import { type ClusterLogger, CONSOLE_LOGGER } from "./logger";
import { isMirrorReadOnly, MIRROR_NAME_CONFIG } from "./mirror-read-only";
import type { Random } from "./random";
import type { Cancel, Scheduler } from "./scheduler";
import {
  MARKER_RETRY_BACKOFF_MS,
  type TopicPartition,
  TransactionCoordinator,
} from "./transaction-coordinator";

/** Settings of an embedded cluster. Clock, randomness and scheduling are injected; nothing else is global. */
export interface KafkaClusterOptions {
  /** Number of brokers, ids 0..n-1 (default 3). */
  brokers?: number;
  /**
   * Files in Kafka's layout under this directory (one `broker-N` folder each); omitted: in memory. The
   * cluster locks the directory (`.lock`) until `close()`: a second cluster on it, in this process or
   * another, fails to start with DataDirLockedError.
   */
  dataDir?: string;
  /** The lock of `dataDir` if the caller took it before touching the dir; the cluster releases it on close. */
  dataDirLock?: DataDirLock;
  /**
   * The brokers' disks in memory, by broker id, when the caller keeps them (without `dataDir`): a new
   * cluster given the disks of a killed one starts on them, as a node restarted on the same machine finds
   * its logs and checkpoints. A broker without one here gets a new empty disk.
   */
  memoryDataDirs?: readonly MemoryDataDir[];
  /** fsync file writes (default true). */
  fsync?: boolean;
  /**
   * log.max.open.files: the most segment files this cluster's brokers keep open at once (opened lazily,
   * least recently used closed first). Omitted: the process-wide cache of `DEFAULT_MAX_OPEN_FILES` (256),
   * shared by every file-backed cluster of the process that does not set it.
   */
  logMaxOpenFiles?: number;
  clock: Clock;
  random: Random;
  scheduler: Scheduler;
  /** Kafka's cluster id (22-character base64 UUID); drawn from `random` if omitted. */
  clusterId?: string;
  authorizer?: AuthorizerConfig;
  /** Broker settings shared by every broker. */
  replicaLagTimeMaxMs?: number;
  /**
   * Kafka's broker config `min.insync.replicas` (default 1): the value of every topic that does not set its
   * own, internal topics and mirror topics included.
   */
  minInsyncReplicas?: number;
  /** How many producer ids the transaction coordinator takes from the controller at a time. */
  producerIdBlockSize?: number;
  /** Kafka's producer.id.expiration.ms (default 86400000, 1 day; see `BrokerOptions`). */
  producerIdExpirationMs?: number;
  /** Kafka's producer.id.expiration.check.interval.ms (default 600000). */
  producerIdExpirationCheckIntervalMs?: number;
  /** Kafka's transactional.id.expiration.ms (default 604800000, 7 days; see `TransactionCoordinatorOptions`). */
  transactionalIdExpirationMs?: number;
  /** Kafka's transaction.abort.timed.out.transaction.cleanup.interval.ms (default 10000). */
  transactionAbortIntervalMs?: number;
  /** How often group members whose session timed out are removed (default 1000). */
  groupSessionCheckIntervalMs?: number;
  /** Hears every change of a group's committed offsets (its whole offset map), e.g. to persist them. */
  onGroupOffsetsChanged?: GroupCoordinatorOptions["onOffsetsChanged"];
  /**
   * Stores the transactions' state (see `TransactionState`) after each change, before the request that
   * made it is answered; `loadTransactionState` gives it back after a restart. A throw fails the request
   * that made the change (retriable, nothing changed).
   */
  onTransactionStateChanged?: (state: TransactionState) => void;
  /** Where brokers report log recoveries that dropped data (default: stderr). */
  logger?: ClusterLogger;
}

/**
 * An embedded Kafka cluster: a controller, N brokers with their own disks, the transaction and group
 * coordinators, ACLs and quotas, all in process. Brokers can be stopped, crashed and restarted; with a
 * `dataDir` a restarted broker recovers its logs from disk.
 */
export class KafkaCluster implements BrokerNetwork {
  readonly clusterId: string;
  readonly controller: Controller;
  readonly authorizer: Authorizer;
  readonly quotas: ClientQuotaManager;
  readonly transactions: TransactionCoordinator;
  /** End markers held back from read-only mirror partitions (see `HeldTxnMarker`). */
  readonly heldTxnMarkers = new HeldTxnMarkers();
  /** Partitions (topic and index) a mirror's truncation cut since they were last seen writable. */
  private readonly cutWhileReadOnly = new Set<string>();
  /** A held-marker pass scheduled because a partition holding markers became writable (see below). */
  private heldMarkerPass: Cancel | undefined;
  readonly groups: GroupCoordinator;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  private readonly options: KafkaClusterOptions;
  private readonly dataDirs = new Map<number, DataDir>();
  private readonly running = new Map<number, Broker>();
  private producerIdBlock = { next: 0n, end: 0n };
  private readonly unreachable = new Set<number>();
  private readonly brokerListeners = new Set<(brokerId: number, running: boolean) => void>();
  private readonly housekeeping = new Map<string, Cancel>();
  private readonly diskLatencies = new Map<number, number>();
  private replicationLatencyMs = 0;
  private readonly lock: DataDirLock | undefined;
  private closed = false;
  /** Open segment files of this cluster's brokers when `logMaxOpenFiles` is set. */
  private readonly fileHandles: FileHandleCache | undefined;

  /** Locks `options.dataDir` first (throws DataDirLockedError if another cluster holds it). */
  constructor(options: KafkaClusterOptions) {
    this.fileHandles =
      options.logMaxOpenFiles === undefined ? undefined : new FileHandleCache(options.logMaxOpenFiles);
    this.lock = lockDataDir(options);
    this.options = options;
    this.clock = options.clock;
    this.scheduler = options.scheduler;
    this.clusterId = options.clusterId ?? randomClusterId(options.random);
    this.controller = new Controller({
      random: options.random,
      minInsyncReplicas: options.minInsyncReplicas,
      // Kafka's broker logs "Error publishing broker metadata" and goes on with the next record.
      onListenerError: (error, entry) => {
        const message = error instanceof Error ? error.message : String(error);
        if (entry === undefined) {
          (options.logger ?? CONSOLE_LOGGER).warn(
            { event: "controller.available_listener_failed", error: message },
            `a listener of the controller's return from a failover window failed: ${message}. The other listeners were still called.`,
          );
          return;
        }
        (options.logger ?? CONSOLE_LOGGER).warn(
          { event: "metadata.apply_failed", offset: entry.offset, record: entry.record.type, error: message },
          `a broker failed to apply metadata record ${entry.offset} (${entry.record.type}): ${message}. It goes on with the next record; the partitions this one changed may not have taken the change.`,
        );
      },
    });
    this.authorizer = new Authorizer(options.authorizer ?? { enabled: false });
    // ACLs are metadata: they go through the controller's log (persisted, replayed after a restart) and the
    // authorizer applies them as the feed delivers them.
    this.authorizer.attachLog((records) => this.controller.appendAclRecords(records));
    // A mirror's truncation (a re-add's or failback's) drops the markers held for the partition: the
    // transactions they end were local writes it cut, or are no longer the log's.
    this.controller.subscribe(({ record }) => {
      // A topic created (again) under a name: none of its partitions was cut, whatever a deleted topic of
      // that name went through. (The replay after a restart sees the old topic's cut too: without this it
      // would outlive the marker writes that had forgotten it before the restart.)
      if (record.type === "Topic") {
        for (const key of this.cutWhileReadOnly)
          if (key.startsWith(`${record.name}\u0000`)) this.cutWhileReadOnly.delete(key);
        return;
      }
      if (record.type !== "ReplicaTruncation" && record.type !== "MirrorReadOnly") return;
      const topic = this.controller.image.topicsById.get(record.topicId)?.name;
      if (topic === undefined) return;
      // Writable again (STOPPED): a later re-add's read-only period starts with no cut.
      if (record.type === "MirrorReadOnly") {
        if (record.readOnly) return;
        this.cutWhileReadOnly.delete(`${topic}\u0000${record.partition}`);
        // Its held markers are written now, not at the next housekeeping pass (up to 10 s later): until then
        // a transaction whose end was acknowledged stays open on the writable partition, holding its last
        // stable offset (soak transitions FC_SEED=488: an ABORT held while a re-add made the topic read-only,
        // the re-add removed while FAILED, the transaction open for 3.8 s after STOPPED).
        if (this.heldTxnMarkers.on({ topic, partition: record.partition }).length > 0)
          this.writeHeldMarkersSoon();
        return;
      }
      this.cutWhileReadOnly.add(`${topic}\u0000${record.partition}`);
      for (const m of this.heldTxnMarkers.on({ topic, partition: record.partition }))
        this.heldTxnMarkers.release(m);
    });
    this.controller.subscribe(({ record }) => {
      if (record.type === "Acl" || record.type === "RemoveAcl") this.authorizer.apply(record);
    });
    this.quotas = new ClientQuotaManager({ clock: options.clock });
    const store = options.onTransactionStateChanged;
    this.transactions = new TransactionCoordinator({
      clock: options.clock,
      scheduler: options.scheduler,
      ...(options.transactionalIdExpirationMs !== undefined && {
        transactionalIdExpirationMs: options.transactionalIdExpirationMs,
      }),
      ...(store && {
        persist: (transactions) => store({ transactions, heldMarkers: this.heldTxnMarkers.all() }),
      }),
      nextProducerId: () => this.nextProducerId(),
      // Kafka's WriteTxnMarkers: the leader appends the marker and answers once its in-sync replicas have it
      // (acks=all), so a marker lost with its leader is written again on the next one.
      writeTxnMarker: (m) => {
        const { topic, partition } = m.partition;
        // Kafka's TransactionMarkerChannelManager: a partition that no longer exists (its topic deleted)
        // gets no marker, and the transaction completes without it (otherwise it stays PrepareCommit or
        // PrepareAbort for good, now across restarts too, and its transactional id is refused forever).
        if (this.controller.image.partition(topic, partition) === undefined) return;
        const leader = this.leaderFor(topic, partition);
        // A partition that became a mirror partition again since the transaction wrote to it (a re-add or
        // failback) holds its source's log: this cluster's marker would be a batch the source does not
        // have, at an offset the source's next batch needs. The transaction's own batches there are local
        // writes the re-add truncates, so the marker counts as written without touching the mirror's log;
        // it is held, and written once the partition is writable again if the re-add was removed before its
        // truncation (the transaction still open there: its commit was acknowledged).
        const mirrorName = this.controller.image.topic(topic)?.configs.get(MIRROR_NAME_CONFIG);
        const replica = leader.replica(topic, partition);
        // Once a truncation cut it, the log up to its end is the source's: a transaction of the producer id
        // open there is not this one (a source's, or one the cut reopened), so nothing is held.
        if (replica?.isReadOnly(mirrorName)) {
          const open = replica.log.ongoingTransactions().find((t) => t.producerId === m.producerId);
          const topicId = this.controller.image.topic(topic)?.topicId;
          if (open && topicId !== undefined && !this.cutWhileReadOnly.has(`${topic}\u0000${partition}`))
            this.heldTxnMarkers.hold({
              ...m,
              topicId,
              firstOffset: open.firstOffset,
              heldAt: this.controller.metadataLog().length,
            });
          return;
        }
        this.cutWhileReadOnly.delete(`${topic}\u0000${partition}`);
        const info = this.appendTxnMarker(leader, topic, partition, m);
        const marker = info.lastOffset!;
        if ((leader.replica(topic, partition)?.log.highWatermark ?? -1n) > marker) return;
        return leader.awaitReplicated(topic, partition, marker);
      },
      txnOpenOnLeader: (partition, producerId) => {
        // A mirror partition holds the source's transactions (producer ids of another cluster): never ours.
        if (this.controller.image.partition(partition.topic, partition.partition)?.mirrorReadOnly)
          return false;
        try {
          const log = this.leaderFor(partition.topic, partition.partition).replica(
            partition.topic,
            partition.partition,
          )?.log;
          return log?.ongoingTransactions().some((t) => t.producerId === producerId) ?? false;
        } catch {
          return false; // no leader now: the next pass asks again
        }
      },
    });
    if (store) this.heldTxnMarkers.onChange = (heldMarkers) => this.storeHeldMarkers(store, heldMarkers);
    this.groups = new GroupCoordinator({
      clock: options.clock,
      partitionCount: (topic) => this.controller.image.topic(topic)?.partitions.length ?? 0,
      onOffsetsChanged: options.onGroupOffsetsChanged,
    });
    // Kafka deletes a deleted topic's committed offsets: a topic created again under its name (another
    // topic id) must not hand its consumers (or a mirror syncing them) the old topic's positions.
    const topicNames = new Map<string, string>();
    this.controller.subscribe(({ record }) => {
      if (record.type === "Topic") topicNames.set(record.topicId, record.name);
      else if (record.type === "RemoveTopic") {
        const name = topicNames.get(record.topicId);
        topicNames.delete(record.topicId);
        if (name !== undefined) this.groups.onTopicDeleted(name);
      }
    });
  }

  /**
   * Loads the transactions' state stored by `onTransactionStateChanged` (a restart), after the metadata
   * replay and before the brokers start: decided transactions write their markers again, ongoing ones
   * are aborted once past their timeout, and held markers are written once their partitions are writable.
   */
  loadTransactionState(state: TransactionState): void {
    this.transactions.load(state.transactions);
    // A cut recorded after a marker was held released it (the subscription above); the replay ran before
    // the markers were loaded, so a release whose store did not follow its metadata record (a crash in
    // between, a failed store) would bring the marker back, to be written over the source's batches.
    this.heldTxnMarkers.load(
      state.heldMarkers.filter((m) => {
        const p = this.controller.image.topicsById.get(m.topicId)?.partitions[m.partition.partition];
        const heldAt = m.heldAt;
        return heldAt === undefined || !(p?.logRewrites ?? []).some((r) => r.id >= heldAt);
      }),
    );
  }

  /** Stores a change of the held markers; a failure is reported, and the next change stores all again. */
  private storeHeldMarkers(store: (state: TransactionState) => void, heldMarkers: HeldTxnMarker[]): void {
    try {
      store({ transactions: this.transactions.listTransactions(), heldMarkers });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      (this.options.logger ?? CONSOLE_LOGGER).warn(
        { event: "transactions.store_failed", error: message },
        `the held transaction markers could not be stored: ${message}. They are kept in memory and stored with the next change; a restart before then forgets this change.`,
      );
    }
  }

  /** Starts a cluster with all its brokers running. */
  static start(options: KafkaClusterOptions): KafkaCluster {
    if (typeof options === "object" && options !== null) checkClusterOptionKeys(options);
    const brokers = options?.brokers ?? 3;
    if (!Number.isSafeInteger(brokers) || brokers < 1) {
      // Checked before anything starts (a data dir is locked by the constructor).
      throw new ClusterError(
        "INVALID_REQUEST",
        `brokers must be an integer >= 1, got ${typeof brokers === "number" ? String(brokers) : JSON.stringify(brokers)}; a cluster needs at least one broker`,
      );
    }
    for (const name of ["producerIdExpirationMs", "producerIdExpirationCheckIntervalMs"] as const) {
      const ms = options?.[name];
      if (ms !== undefined && (!Number.isSafeInteger(ms) || ms < 1)) {
        // Kafka's TransactionLogConfig: both are integers of at least 1 (ms).
        throw new ClusterError(
          "INVALID_REQUEST",
          `${name} must be an integer >= 1 (milliseconds), got ${String(ms)}; omit it for Kafka's default`,
        );
      }
    }
    // Injected, never read from the process (determinism): a missing one otherwise fails deep inside.
    const missing = (["clock", "scheduler", "random"] as const).filter((k) => options?.[k] === undefined);
    if (missing.length > 0) {
      throw new ClusterError(
        "INVALID_REQUEST",
        `KafkaCluster.start needs ${missing.join(", ")}: the cluster reads no time or randomness of its own. For real time pass clock: new SystemClock(), scheduler: new EventLoopScheduler() and random: new SeededRandom(<seed>) (all from @cluster-mirror/cluster)`,
      );
    }
    const cluster = new KafkaCluster(options);
    try {
      for (let id = 0; id < brokers; id++) cluster.startBroker(id);
    } catch (error) {
      cluster.close(); // the caller gets no cluster to close: release the data dir here
      throw error;
    }
    return cluster;
  }

  /** A running broker, or undefined if it is stopped, crashed or cut off from the others. */
  broker(brokerId: number, from?: number): Broker | undefined {
    const cut = this.unreachable.has(brokerId) || (from !== undefined && this.unreachable.has(from));
    return cut ? undefined : this.running.get(brokerId);
  }

  /**
   * A running broker as code in its own process reaches it (its coordinators, its mirror fetchers, its
   * state log), or undefined if it is stopped or crashed. A network cut between brokers (`setReachable`)
   * does not separate a broker from itself; `broker(id)` is the view from elsewhere.
   */
  localBroker(brokerId: number): Broker | undefined {
    return this.running.get(brokerId);
  }

  /**
   * Cuts a running broker off from the other brokers (and clients) or heals it. The controller still
   * hears its heartbeats, so it is not fenced: its followers stop fetching and fall out of the ISR after
   * replica.lag.time.max.ms, as in a network partition between brokers.
   */
  setReachable(brokerId: number, reachable: boolean): void {
    if (reachable) this.unreachable.delete(brokerId);
    else this.unreachable.add(brokerId);
  }

  /**
   * Makes broker `brokerId`'s disk slow (`ms` per fsync, see `Broker.setDiskLatency`) or fast again (0).
   * The latency belongs to the disk: it survives restarts of the broker.
   */
  setDiskLatency(brokerId: number, ms: number): void {
    requireLatencyMs("disk latency", ms);
    this.running.get(brokerId)?.setDiskLatency(ms);
    if (ms === 0) this.diskLatencies.delete(brokerId);
    else this.diskLatencies.set(brokerId, ms);
  }

  /**
   * Fills broker `brokerId`'s disk (`full` true) or frees space on it again (false): while full, its log
   * appends, compaction rewrites and checkpoint writes fail with KAFKA_STORAGE_ERROR (see `MemoryDisk`).
   * The disk keeps its state across restarts of the broker. Only for clusters that keep their logs in
   * memory (no `dataDir`): a real directory fills up for real.
   */
  setDiskFull(brokerId: number, full: boolean): void {
    const dir = this.dataDirs.get(brokerId);
    if (dir === undefined) {
      throw new RangeError(
        `no broker ${brokerId} in this cluster (brokers: ${[...this.dataDirs.keys()].join(", ")})`,
      );
    }
    if (!(dir instanceof MemoryDataDir)) {
      throw new RangeError(
        `setDiskFull models a full disk only for logs kept in memory; broker ${brokerId} stores its logs in ${this.options.dataDir}`,
      );
    }
    dir.disk.full = full;
  }

  /**
   * Makes the network between this cluster's brokers slow (`ms`, 0: fast again): no replica fetch runs
   * sooner than `ms` after it was scheduled (a longer backoff or disk latency is not lengthened), so a
   * leader hears of its followers' log ends, and the followers of its high watermark, that much later
   * (acks=-1 produces wait longer; after a leader change the new leader learns its high watermark late).
   * Clients and mirror fetchers are not slowed.
   */
  setReplicationLatency(ms: number): void {
    requireLatencyMs("replication latency", ms);
    this.replicationLatencyMs = ms;
  }

  /** The modelled latency between brokers in ms (0: none). */
  replicationLatency(): number {
    return this.replicationLatencyMs;
  }

  /** False while `setReachable(brokerId, false)` cuts the broker off from the others. */
  isReachable(brokerId: number): boolean {
    return !this.unreachable.has(brokerId);
  }

  /** True while broker `brokerId`'s in-memory disk is full (`setDiskFull`); false for a real directory. */
  isDiskFull(brokerId: number): boolean {
    const dir = this.dataDirs.get(brokerId);
    return dir instanceof MemoryDataDir && dir.disk.full;
  }

  /** Broker `brokerId`'s modelled disk latency in ms (0: none). */
  diskLatency(brokerId: number): number {
    return this.diskLatencies.get(brokerId) ?? 0;
  }

  /** Ids of the running brokers. */
  runningBrokers(): number[] {
    return [...this.running.keys()].sort((a, b) => a - b);
  }

  /** Starts (or restarts) broker `brokerId` on its disk; ClusterClosedError once the cluster is closed. */
  startBroker(brokerId: number): Broker {
    this.ensureOpen(`start broker ${brokerId}`);
    const existing = this.running.get(brokerId);
    if (existing) return existing;
    const broker = new Broker({
      brokerId,
      controller: this.controller,
      network: this,
      dataDir: this.dataDir(brokerId),
      clock: this.clock,
      scheduler: this.scheduler,
      authorizer: this.authorizer,
      quotas: this.quotas,
      verifyTransaction: (transactionalId, topic, partition, producer) => {
        this.transactions.verifyTransaction({
          transactionalId,
          ...producer,
          partition: { topic, partition },
        });
        // The producer id's transaction a held marker ends (its end acknowledged) is still open on this
        // writable partition until the next housekeeping pass: appended to now, the batch would join it, and
        // the held marker would end both. Written first (or the produce fails and is retried).
        this.writeHeldTxnMarkers({ topic, partition, producerId: producer.producerId });
        return true;
      },
      replicaLagTimeMaxMs: this.options.replicaLagTimeMaxMs,
      minInsyncReplicas: this.options.minInsyncReplicas,
      producerIdExpirationMs: this.options.producerIdExpirationMs,
      producerIdExpirationCheckIntervalMs: this.options.producerIdExpirationCheckIntervalMs,
      logger: this.options.logger,
    });
    broker.setDiskLatency(this.diskLatency(brokerId));
    this.running.set(brokerId, broker);
    try {
      broker.start();
    } catch (error) {
      // Not started (see `Broker.start`): not counted running, so a later start makes a new broker.
      this.running.delete(brokerId);
      throw error;
    }
    this.startHousekeeping();
    for (const l of this.brokerListeners) l(brokerId, true);
    return broker;
  }

  /**
   * Hears brokers start and stop (clean or crash): what runs inside a broker process (mirror coordinators,
   * fetchers) starts and dies with it. Returns the function that unsubscribes.
   */
  onBrokerChange(listener: (brokerId: number, running: boolean) => void): () => void {
    this.brokerListeners.add(listener);
    return () => this.brokerListeners.delete(listener);
  }

  /** A clean shutdown of one broker. */
  stopBroker(brokerId: number): void {
    const broker = this.running.get(brokerId);
    if (!broker) return;
    for (const l of this.brokerListeners) l(brokerId, false);
    broker.shutdown();
    this.running.delete(brokerId);
  }

  /** Kills one broker at once (its disk keeps what was appended). */
  crashBroker(brokerId: number): void {
    const broker = this.running.get(brokerId);
    if (!broker) return;
    for (const l of this.brokerListeners) l(brokerId, false);
    broker.crash();
    this.running.delete(brokerId);
  }

  /** The running broker that leads a partition; NOT_LEADER_OR_FOLLOWER/LEADER_NOT_AVAILABLE otherwise. */
  leaderFor(topic: string, partition: number): Broker {
    // Closed, no election will ever come: say so rather than "retry after the election".
    this.ensureOpen(`reach the leader of ${topic}-${partition}`);
    const meta = this.controller.image.partition(topic, partition);
    if (!meta) {
      throw new ClusterError(
        "UNKNOWN_TOPIC_OR_PARTITION",
        `${topic}-${partition} does not exist on this cluster`,
      );
    }
    const broker = meta.leader >= 0 ? this.broker(meta.leader) : undefined;
    if (!broker) {
      throw new ClusterError(
        "LEADER_NOT_AVAILABLE",
        `${topic}-${partition} has no running leader right now (leader ${meta.leader}); retry after the election`,
      );
    }
    return broker;
  }

  /**
   * Shuts every broker down cleanly, then releases the data dir's lock. From then on the cluster is closed
   * for good: its clients' calls, metadata changes and broker starts fail at once with ClusterClosedError
   * (closing clients still works). Calling it again does nothing.
   */
  close(): void {
    for (const cancel of this.housekeeping.values()) cancel();
    this.housekeeping.clear();
    this.heldMarkerPass?.();
    this.heldMarkerPass = undefined;
    this.transactions.close();
    // Nothing is stored after close (see TransactionCoordinator.close): the dir's lock is released below.
    this.heldTxnMarkers.onChange = undefined;
    for (const id of this.runningBrokers()) this.stopBroker(id);
    this.controller.close(this.clusterId);
    this.closed = true;
    this.lock?.release();
  }

  /** True once `close()` ran. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Throws ClusterClosedError (saying it could not `what`) once the cluster is closed. */
  ensureOpen(what: string): void {
    if (this.closed) throw new ClusterClosedError(this.clusterId, what);
  }

  /**
   * The coordinators' timers: abort transactions past their timeout (fencing their producers) and
   * remove group members whose session expired, as Kafka's coordinators do on their own schedule.
   */
  private startHousekeeping(): void {
    const every = (name: string, intervalMs: number, task: () => void) => {
      if (this.housekeeping.has(name)) return;
      const tick = () => {
        task();
        this.housekeeping.set(name, this.scheduler.schedule(tick, intervalMs));
      };
      this.housekeeping.set(name, this.scheduler.schedule(tick, intervalMs));
    };
    every("transaction-timeouts", this.options.transactionAbortIntervalMs ?? 10_000, () => {
      this.transactions.abortTimedOutTransactions();
      this.transactions.expireTransactionalIds();
      this.writeHeldTxnMarkers();
    });
    every("group-sessions", this.options.groupSessionCheckIntervalMs ?? 1000, () =>
      this.groups.expireMembers(),
    );
  }

  /**
   * The markers held for `tp` whose transaction is still open on its leader's log where it was held: a
   * marker whose transaction a truncation cut ends nothing there (the producer id's open transaction, if
   * any, is another one: a source's, or one a cut reopened). Unknown leader: none.
   */
  openHeldTxnMarkers(tp: TopicPartition): HeldTxnMarker[] {
    let open: { producerId: bigint; firstOffset: bigint }[];
    try {
      open =
        this.leaderFor(tp.topic, tp.partition).replica(tp.topic, tp.partition)?.log.ongoingTransactions() ??
        [];
    } catch {
      return [];
    }
    const topicId = this.controller.image.topic(tp.topic)?.topicId;
    return this.heldTxnMarkers
      .on(tp)
      .filter(
        (m) =>
          m.topicId === topicId &&
          open.some((t) => t.producerId === m.producerId && t.firstOffset === m.firstOffset),
      );
  }

  /**
   * Each held marker (see `HeldTxnMarker`) whose transaction is still open where it was held: written once
   * its partition is writable again (a re-add or failback removed before its truncation), kept while it is
   * read-only, dropped once the transaction is no longer open there (a truncation cut it). A partition
   * without a leader now is tried again on the next pass. With `only`, the markers of that producer id on
   * that partition alone, before its produce: one that cannot be written throws.
   */
  /**
   * One held-marker pass on the next turn of the scheduler (once the metadata that made it writable
   * applied), or `delayMs` later.
   */
  private writeHeldMarkersSoon(delayMs = 0): void {
    if (this.heldMarkerPass !== undefined) return;
    this.heldMarkerPass = this.scheduler.schedule(() => {
      this.heldMarkerPass = undefined;
      if (!this.closed) this.writeHeldTxnMarkers();
    }, delayMs);
  }

  private writeHeldTxnMarkers(only?: TopicPartition & { producerId: bigint }): void {
    const held = only === undefined ? this.heldTxnMarkers.all() : this.heldTxnMarkers.on(only);
    if (held.length === 0) return;
    for (const key of only === undefined ? this.cutWhileReadOnly : []) {
      const [topic, partition] = key.split("\u0000");
      const meta = this.controller.image.partition(topic!, Number(partition));
      const mirrorName = this.controller.image.topic(topic!)?.configs.get(MIRROR_NAME_CONFIG);
      if (!meta || !isMirrorReadOnly(meta, mirrorName)) this.cutWhileReadOnly.delete(key);
    }
    for (const m of held) {
      if (only !== undefined && m.producerId !== only.producerId) continue;
      const { topic, partition } = m.partition;
      // The topic was deleted (maybe created again under the name): nothing of it to end.
      if (this.controller.image.topic(topic)?.topicId !== m.topicId) {
        this.heldTxnMarkers.release(m);
        continue;
      }
      let leader: Broker;
      try {
        leader = this.leaderFor(topic, partition);
      } catch {
        continue;
      }
      const replica = leader.replica(topic, partition);
      if (!replica) continue;
      const open = replica.log
        .ongoingTransactions()
        .some((t) => t.producerId === m.producerId && t.firstOffset === m.firstOffset);
      if (!open) {
        // Closed by a marker only the leader holds (above its high watermark, so the transaction still
        // holds the last stable offset) it is kept: a leader lost before its followers copied the marker
        // leaves the transaction open on the next one, where nothing else would end it once the
        // transactional id starts its next transaction. Cut (the log ends at or before it): dropped.
        const log = replica.log;
        if (log.lastStableOffset > m.firstOffset || log.logEndOffset <= m.firstOffset)
          this.heldTxnMarkers.release(m);
        continue;
      }
      if (replica.isReadOnly(this.controller.image.topic(topic)?.configs.get(MIRROR_NAME_CONFIG))) continue;
      try {
        this.appendTxnMarker(leader, topic, partition, m);
        // Released on a later pass, which finds the transaction closed below the high watermark: a leader
        // lost before its followers copied the marker leaves it open on the next one, and the marker is
        // written again there.
      } catch (error) {
        if (only !== undefined) throw error;
        // An ISR under min.insync.replicas, a full disk, a lost leadership: tried again after the backoff, as
        // the coordinator retries its markers, not only at the next housekeeping pass (up to 10 s later,
        // while the open transaction holds the partition's last stable offset).
        this.writeHeldMarkersSoon(MARKER_RETRY_BACKOFF_MS);
      }
    }
  }

  /**
   * Appends the marker (COMMIT or ABORT) that ends `m`'s transaction on the partition's leader log, as
   * Kafka's WriteTxnMarkers does (acks=all): refused with NOT_ENOUGH_REPLICAS before it is appended while
   * the ISR is under min.insync.replicas, and retried. Appended then, it would wait above the held high
   * watermark, and each retry after the wait timed out would append another marker.
   */
  private appendTxnMarker(
    leader: Broker,
    topic: string,
    partition: number,
    m: Pick<HeldTxnMarker, "result" | "producerId" | "producerEpoch" | "coordinatorEpoch">,
  ) {
    return leader.appendControlBatch(
      topic,
      partition,
      encodeEndTxnMarkerBatch({
        type: m.result === "COMMIT" ? 1 : 0,
        producerId: m.producerId,
        producerEpoch: m.producerEpoch,
        coordinatorEpoch: m.coordinatorEpoch,
        timestamp: BigInt(this.clock.now()),
      }),
      -1,
    );
  }

  private dataDir(brokerId: number): DataDir {
    let dir = this.dataDirs.get(brokerId);
    if (!dir) {
      dir = this.options.dataDir
        ? new FileDataDir(path.join(this.options.dataDir, `broker-${brokerId}`), {
            fsync: this.options.fsync,
            ...(this.fileHandles ? { fileHandles: this.fileHandles } : {}),
          })
        : (this.options.memoryDataDirs?.[brokerId] ?? new MemoryDataDir());
      this.dataDirs.set(brokerId, dir);
    }
    return dir;
  }

  private nextProducerId(): bigint {
    if (this.producerIdBlock.next >= this.producerIdBlock.end) {
      const size = this.options.producerIdBlockSize ?? 1000;
      const first = this.controller.allocateProducerIds(size);
      this.producerIdBlock = { next: first, end: first + BigInt(size) };
    }
    return this.producerIdBlock.next++;
  }
}

/** The data dir's lock: the one the caller holds, or a new one; none in memory. */
function lockDataDir(options: KafkaClusterOptions): DataDirLock | undefined {
  const { dataDir, dataDirLock } = options;
  if (dataDir === undefined) {
    if (dataDirLock) throw new ClusterError("INVALID_REQUEST", "dataDirLock was given without a dataDir");
    return undefined;
  }
  if (options.memoryDataDirs) {
    throw new ClusterError(
      "INVALID_REQUEST",
      "memoryDataDirs and dataDir were both given; a broker has one disk",
    );
  }
  if (!dataDirLock) return acquireDataDir(dataDir);
  if (path.resolve(dataDirLock.dir) !== path.resolve(dataDir)) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `dataDirLock locks ${dataDirLock.dir}, not the dataDir ${dataDir}; pass the lock of the cluster's own dir`,
    );
  }
  return dataDirLock;
}

/**
 * Locks `dataDir`, creating it if needed. A path that cannot be a data dir (a file, a directory this process
 * may not write) is refused as Kafka's LogManager refuses it at start ("Failed to create or validate data
 * directory"): KAFKA_STORAGE_ERROR (not retriable) naming the dir and the system's error, before any broker starts.
 */
function acquireDataDir(dataDir: string): DataDirLock {
  try {
    return DataDirLock.acquire(dataDir);
  } catch (error) {
    // Already typed: held by another cluster, or file storage unavailable (a browser build).
    if (error instanceof KafkaError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    // mkdir of a path that is a file answers EEXIST; what is wrong is that it is not a directory.
    const reason = code === "EEXIST" ? "ENOTDIR: a file, not a directory" : code;
    // Not retriable (as a browser build's unavailable file storage): the same path fails the same way.
    throw new KafkaError(
      "KAFKA_STORAGE_ERROR",
      56,
      false,
      `cannot create or use dataDir ${dataDir} (${reason}): nothing was started. Pass a directory this process can create and write`,
      { cause: error },
    );
  }
}

/** Kafka's cluster id form: 16 random bytes in URL-safe base64 without padding (22 characters). */
function randomClusterId(random: Random): string {
  const bytes = Buffer.alloc(16);
  for (let i = 0; i < 16; i++) bytes[i] = Math.floor(random.next() * 256);
  return bytes.toString("base64url");
}
