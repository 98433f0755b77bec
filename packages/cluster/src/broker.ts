import {
  type AbortedTxn,
  compacts,
  deletesByRetention,
  divergenceTruncationOffset,
  type IsolationLevel,
  KafkaStorageError,
  type LogAppendInfo,
  type LogConfig,
  type LogStorage,
  PartitionLog,
  parseCleanupPolicy,
  UNDEFINED_EPOCH,
  UnexpectedAppendOffsetError,
} from "@cluster-mirror/log";
import { decodeRecords, KafkaError, RecordBatchLayout } from "@cluster-mirror/protocol";
import type { Authorizer } from "./acls";
import type { ClientQuotaManager } from "./client-quotas";
import type { Clock } from "./clock";
import type { Controller } from "./controller";
import type { DataDir } from "./data-dir";
import { ClusterError, requireLatencyMs } from "./errors";
import {
  formatHighWatermarks,
  HIGH_WATERMARK_CHECKPOINT,
  parseHighWatermarks,
} from "./high-watermark-checkpoint";
import { type ClusterLogger, CONSOLE_LOGGER } from "./logger";
import { MetadataImage, type PendingTruncation, type TopicMetadata } from "./metadata-image";
import type { MetadataLogEntry } from "./metadata-records";
import { OwedTruncations } from "./owed-truncations";
import { Partition, type PartitionConfig, type RecoveryLoss, type ReplicaFetchResult } from "./partition";
import { settlesAny } from "./pending-truncation";
import type { Cancel, Scheduler } from "./scheduler";
import { topicConfigValue } from "./topic-configs";
import type { Uuid } from "./uuid";

/** How often a follower out of the ISR fetches while it has nothing new (Kafka's replica.fetch.wait.max.ms). */
const FOLLOWER_IDLE_FETCH_MS = 500;

/** How a broker reaches the other brokers of its cluster (undefined: that broker is down or unreachable). */
export interface BrokerNetwork {
  /** Broker `brokerId` as seen from broker `from` (a client when omitted). */
  broker(brokerId: number, from?: number): Broker | undefined;
  /** The modelled latency between brokers in ms (0 or absent: none; see `KafkaCluster.setReplicationLatency`). */
  replicationLatency?(): number;
}

/** A change of leadership of one partition on this broker, for coordinators that live on partition leaders. */
export interface LeadershipChange {
  topic: string;
  topicId: Uuid;
  partition: number;
  leaderEpoch: number;
  /** True: this broker became leader at `leaderEpoch`. False: it stopped being leader. */
  elected: boolean;
  /**
   * True when this broker was leader already and only the leader epoch moved (BumpLeaderEpochs, a
   * failover's bump): listeners that act on gaining leadership (start a fetcher) have nothing new to do.
   */
  epochBump: boolean;
}

/** Broker settings and the ports it uses. */
export interface BrokerOptions {
  brokerId: number;
  rack?: string | null;
  controller: Controller;
  network: BrokerNetwork;
  dataDir: DataDir;
  clock: Clock;
  scheduler: Scheduler;
  authorizer: Authorizer;
  quotas: ClientQuotaManager;
  /**
   * Checks that a transactional produce's producer (id and epoch from its batch) is the transactional id's
   * current one and its partition was added to the transaction (KIP-890 verification); may throw the
   * coordinator's error.
   */
  verifyTransaction?: (
    transactionalId: string,
    topic: string,
    partition: number,
    producer: { producerId: bigint; producerEpoch: number },
  ) => boolean;
  /** Kafka's replica.lag.time.max.ms (default 30000). */
  replicaLagTimeMaxMs?: number;
  /** Kafka's broker config min.insync.replicas: the value of a topic that sets none (default 1). */
  minInsyncReplicas?: number;
  /** Kafka's replica.fetch.max.bytes (default 1 MiB). */
  replicaFetchMaxBytes?: number;
  /** Kafka's replica.fetch.backoff.ms, used when the leader is unreachable (default 100). */
  replicaFetchBackoffMs?: number;
  /** How often retention and compaction run over the hosted logs (default 30000). */
  logCleanerIntervalMs?: number;
  /** How often the high watermarks are checkpointed (default 5000, Kafka's replica.high.watermark.checkpoint.interval.ms). */
  highWatermarkCheckpointIntervalMs?: number;
  /**
   * Kafka's producer.id.expiration.ms (default 86400000, 1 day): a partition forgets a producer with no open
   * transaction whose last batch is this old (by its timestamp, against the broker's clock).
   */
  producerIdExpirationMs?: number;
  /** Kafka's producer.id.expiration.check.interval.ms: how often every hosted log checks (default 600000). */
  producerIdExpirationCheckIntervalMs?: number;
  /** Where log recoveries that dropped data, and refused truncations, are reported (default: stderr). */
  logger?: ClusterLogger;
}

/** Who is asking: the principal for ACLs and the client id for quotas. */
export interface RequestContext {
  principal?: string;
  clientId?: string;
  host?: string;
}

/** One partition of a produce request: exactly one record batch, as produced by a client. */
export interface ProduceRequest extends RequestContext {
  topic: string;
  partition: number;
  /** A whole RecordBatch v2; the broker rewrites its base offset and leader epoch in place. */
  batch: Buffer;
  /** 0, 1 or -1 (all). */
  acks: number;
  /** How long an acks=-1 produce waits for the ISR (default 30000). */
  timeoutMs?: number;
  /**
   * The producer's transactional.id: required for a transactional batch (else
   * TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka), which also needs WRITE on it.
   */
  transactionalId?: string;
}

/** The answer to a produce. */
export interface ProduceResponse {
  baseOffset: bigint;
  lastOffset: bigint;
  logStartOffset: bigint;
  /** True when the batch was a retry of one already appended: nothing new was written. */
  duplicate: boolean;
  throttleTimeMs: number;
  /** The broker's append time under `message.timestamp.type=LogAppendTime`, -1 otherwise (and for a duplicate). */
  logAppendTimeMs: bigint;
}

/** One partition of a consumer fetch. */
export interface FetchRequest extends RequestContext {
  topic: string;
  partition: number;
  fetchOffset: bigint;
  maxBytes: number;
  isolationLevel: IsolationLevel;
  /** The leader epoch the consumer believes in (-1: don't check). */
  currentLeaderEpoch?: number;
  /** The epoch of the last batch the fetcher has (KIP-320); a mismatch answers with the diverging epoch. */
  lastFetchedEpoch?: number;
}

/** The answer to a consumer fetch. */
export interface FetchResponse {
  /** Whole raw batches as slices of the stored bytes (views with memory storage: no copy). */
  recordSlices: readonly Buffer[];
  /** Total bytes of `recordSlices`. */
  sizeInBytes: number;
  /** The same bytes as one buffer, joined (copied) on first use when there are several slices. */
  readonly records: Buffer;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  abortedTransactions: AbortedTxn[];
  /** Set when `lastFetchedEpoch` ends earlier here: the fetcher's log diverged; truncate to endOffset. */
  divergingEpoch?: { epoch: number; endOffset: bigint };
  /** The leader epoch the data was read at. */
  leaderEpoch: number;
  throttleTimeMs: number;
}

interface Waiter {
  offset: bigint;
  resolve: () => void;
  reject: (error: unknown) => void;
  cancel: Cancel;
}

/**
 * One broker of the embedded cluster: it replays the controller's metadata feed, hosts partition replicas
 * on its data dir, leads some (answering produce, fetch, list offsets and epoch queries) and follows the
 * others (fetching from their leaders, truncating where its log diverged). Requests that reach the wrong
 * broker or a stale epoch get Kafka's errors, so clients refresh metadata and retry.
 */
export class Broker {
  readonly brokerId: number;
  /** This broker's view of the metadata, built only from the controller's feed. */
  readonly image = new MetadataImage();
  private readonly options: BrokerOptions;
  private readonly partitions = new Map<string, Partition>();
  /**
   * The `partitions` key of each hosted topic-partition, built once: a lookup with a new string hashes it
   * again, and the replica lookups of a failover of thousands of partitions run several per partition.
   */
  private readonly replicaKeys = new Map<Uuid, string[]>();
  private readonly fetchScheduled = new Map<string, Cancel>();
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly leadershipListeners = new Set<(change: LeadershipChange) => void>();
  private readonly loops = new Map<string, Cancel>();
  private unsubscribe: (() => void) | undefined;
  /** High watermarks of the checkpoint read at start, by `topic-partition`, until that log is opened. */
  private checkpointedHw = new Map<string, bigint>();
  /** High watermarks as the checkpoint file holds them: its last successful write, or as read at start. */
  private hwCheckpointOnDisk = new Map<string, bigint>();
  /** Truncations refused because the leader lost data, by partition and leader epoch (logged once each). */
  private readonly refusedTruncations = new Set<string>();
  /** Partition@leaderEpoch keys whose follower append failure was reported (one WARN per epoch). */
  private readonly failedReplicaFetches = new Set<string>();
  /** Scheduled writes that failed with a storage error and have not succeeded since (reported once). */
  private readonly failingWrites = new Set<string>();
  /** Mirror truncations of a leader's log that this broker's replicas must follow (KIP-1279). */
  private readonly owedTruncations: OwedTruncations;
  private running = false;
  /** True while `start` replays the metadata feed: the image is not yet current. */
  private replaying = false;
  /**
   * While `start` replays: the offset of each topic id's last RemoveTopic record, and the topic names that
   * exist at the end of the log. A replica of a topic the replay removes again is never opened: its name
   * may be a live topic's now, whose directory opening (or deleting) it would destroy.
   */
  private replayEnd:
    | { lastRemoval: Map<Uuid, number>; liveNames: Set<string>; removalsHandledTo: number | undefined }
    | undefined;
  /** Names of topics whose removal this broker handled past `removalsDurableTo`. */
  private readonly removedSinceCheckpoint = new Set<string>();
  /**
   * What `REMOVALS_CHECKPOINT` holds: every RemoveTopic up to this metadata offset was handled on this data
   * dir (undefined: no checkpoint, a data dir written before it was kept).
   */
  private removalsDurableTo: number | undefined;
  /**
   * Logs of deleted topics whose directory could not be renamed away (a failing disk), by `topic-partition`
   * (Kafka's LogManager keeps logsToBeDeleted). The removed-topics checkpoint does not move past their
   * removal until they are gone: no log is opened under a removed name before, and a restart's replay deletes
   * them again. A topic created again under the id (a mirror topic takes its source's) would open one as its own.
   */
  private readonly logsToBeDeleted = new Map<string, { topic: TopicMetadata; partition: number }>();
  private diskLatencyMs = 0;

  constructor(options: BrokerOptions) {
    this.brokerId = options.brokerId;
    this.options = options;
    this.owedTruncations = new OwedTruncations(
      options.brokerId,
      options.controller,
      options.scheduler,
      options.replicaFetchBackoffMs ?? 100,
      options.dataDir,
    );
  }

  /** True between `start` and `shutdown`/`crash`. */
  get isRunning(): boolean {
    return this.running;
  }

  /** Opens the logs it hosts (recovering them), replays the metadata feed and registers with the controller. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.checkpointedHw = parseHighWatermarks(this.options.dataDir.readCheckpoint(HIGH_WATERMARK_CHECKPOINT));
    this.hwCheckpointOnDisk = new Map(this.checkpointedHw);
    this.owedTruncations.load();
    // Replaying the feed opens (and recovers) every hosted log before the broker registers, so the
    // controller hears which replicas lost data before it lets this broker lead anything.
    this.replaying = true;
    const metadataLog = this.options.controller.metadataLog();
    this.removalsDurableTo = parseRemovalsCheckpoint(
      this.options.dataDir.readCheckpoint(REMOVALS_CHECKPOINT),
    );
    if (this.removalsDurableTo === undefined && this.options.dataDir.listLogs().length === 0) {
      // No log here: every removal so far is handled. Written now, while the disk may still take it, so
      // that opening a log later needs no write (a full disk would keep every replica closed).
      const end = metadataLog.length - 1;
      if (
        this.retryingStorageWrite("the removed topics checkpoint", () =>
          this.options.dataDir.writeCheckpoint(REMOVALS_CHECKPOINT, String(end)),
        )
      ) {
        this.removalsDurableTo = end;
      }
    }
    this.replayEnd = { ...replayEndOf(metadataLog), removalsHandledTo: this.removalsDurableTo };
    try {
      this.unsubscribe = this.options.controller.subscribe((entry) => this.onMetadata(entry));
    } finally {
      this.replaying = false;
      this.replayEnd = undefined;
    }
    // A replica that leads on the replayed image (its fencing is still queued) follows what it owes first,
    // then records its current epoch as a leader does (the replay recorded none).
    // One whose cut fails (a full disk) does not lead until it succeeds (`reconcileLater`): the replay made it
    // leader already, over the batches the mirror cut.
    for (const p of this.partitions.values()) {
      const meta = this.image.topicsById.get(p.topicId)?.partitions[p.partition];
      if (!p.isLeader || !meta) continue;
      const mirrorName = this.image.topicsById.get(p.topicId)?.configs.get("mirror.name");
      if (this.settleBeforeLeading(p)) {
        p.updateMetadata(meta, mirrorName);
      } else {
        p.updateMetadata({ ...meta, leader: -1 }, mirrorName, true);
        this.failWaiters(p);
        this.emitLeadership(p, false, false);
      }
    }
    const lossy = this.replicas()
      .filter((p) => p.recoveryLoss !== undefined)
      .map((p) => ({ topicId: p.topicId, partition: p.partition }));
    try {
      this.options.controller.registerBroker(this.brokerId, this.options.rack ?? null, lossy);
    } catch (error) {
      // The controller could not record the registration (its metadata log on a full disk): the start
      // fails whole, as a broker that cannot register exits; a later start replays and registers again.
      this.stop();
      throw error;
    }
    const lag = this.options.replicaLagTimeMaxMs ?? 30_000;
    this.every("isr-expiration", Math.max(1, Math.floor(lag / 2)), () => this.maybeShrinkIsr());
    this.every("log-cleaner", this.options.logCleanerIntervalMs ?? 30_000, () => this.runLogCleaner());
    this.every(
      "producer-expiration",
      this.options.producerIdExpirationCheckIntervalMs ?? PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS,
      () => this.removeExpiredProducers(),
    );
    this.every("hw-checkpoint", this.options.highWatermarkCheckpointIntervalMs ?? 5000, () =>
      this.checkpointHighWatermarks(),
    );
  }

  /** A clean shutdown: checkpoints high watermarks, closes logs and tells the controller (it is fenced). */
  shutdown(): void {
    if (!this.running) return;
    this.checkpointHighWatermarks();
    this.stop();
    this.fenceSelf();
  }

  /** A crash: stops at once, writes nothing more. The controller fences the broker, as on a missed heartbeat. */
  crash(): void {
    if (!this.running) return;
    this.stop();
    this.fenceSelf();
  }

  /**
   * Tells the controller this broker stopped. The broker is stopped whatever the answer: a metadata log that
   * cannot be written (a full disk) leaves it unfenced in the image, leading what it led, until it registers
   * again (Kafka's controller would fence it once its session expired; this one has no heartbeats).
   */
  private fenceSelf(): void {
    try {
      this.options.controller.fenceBroker(this.brokerId);
    } catch (error) {
      this.logger.warn(
        { event: "broker.fence_failed", brokerId: this.brokerId, error: String(error) },
        `broker ${this.brokerId} stopped, but the controller could not record it: ${String(error)}. Its partitions keep it as leader (unavailable) until it starts again; free space for the metadata log.`,
      );
    }
  }

  /**
   * Models a slow disk (a slow fsync; the log storage itself stays synchronous): a produce with acks 1 or
   * -1 is acknowledged only `ms` after its append (acks -1 also waits for the ISR), and as a follower, the
   * next replica fetch after an append waits `ms` (so the leader hears of the new log end, and moves its
   * high watermark, that much later). Appends themselves, consumer fetches, control batches and the
   * mirror's append-as-is are not delayed. 0 (default) turns it off.
   */
  setDiskLatency(ms: number): void {
    requireLatencyMs("disk latency", ms);
    this.diskLatencyMs = ms;
  }

  /** The modelled disk latency in ms (0: none). */
  get diskLatency(): number {
    return this.diskLatencyMs;
  }

  /** Listens to this broker gaining and losing partition leadership (for coordinators on internal topics). */
  onLeadershipChange(listener: (change: LeadershipChange) => void): () => void {
    this.leadershipListeners.add(listener);
    return () => this.leadershipListeners.delete(listener);
  }

  /** The replica of a partition hosted here, if any. */
  replica(topic: string, partition: number): Partition | undefined {
    const t = this.image.topic(topic);
    return t && this.partitions.get(this.keyOf(t.topicId, partition));
  }

  /** Every replica hosted here. */
  replicas(): Partition[] {
    return [...this.partitions.values()];
  }

  /** Produce: appends one batch as leader; with acks=-1 resolves once the ISR has it (high watermark). */
  async produce(request: ProduceRequest): Promise<ProduceResponse> {
    this.checkRunning();
    const { topic } = request;
    if (isTransactionalBatch(request.batch)) {
      // Kafka's handleProduceRequest, before any topic check: transactional records need the request's
      // transactional id, and WRITE on it.
      if (request.transactionalId === undefined) {
        throw new ClusterError(
          "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
          `the batch for ${topic}-${request.partition} is transactional but the produce request names no transactional id; send it with the producer's transactional.id, or clear the batch's transactional flag`,
        );
      }
      this.options.authorizer.check({
        principal: request.principal ?? "User:ANONYMOUS",
        host: request.host,
        operation: "WRITE",
        resourceType: "TRANSACTIONAL_ID",
        resourceName: request.transactionalId,
      });
    }
    this.options.authorizer.check({
      principal: request.principal ?? "User:ANONYMOUS",
      host: request.host,
      operation: "WRITE",
      resourceType: "TOPIC",
      resourceName: topic,
    });
    if (![0, 1, -1].includes(request.acks)) {
      throw new ClusterError("INVALID_REQUIRED_ACKS", `acks must be 0, 1 or -1 (all), got ${request.acks}`);
    }
    const p = this.leaderReplica(topic, request.partition);
    const t = this.image.topic(topic)!;
    if (p.isReadOnly(t.configs.get("mirror.name"))) {
      throw new ClusterError("READ_ONLY_TOPIC", readOnlyMessage(p.name, t.configs.get("mirror.name") ?? ""));
    }
    const producer = batchProducer(request.batch);
    if (request.transactionalId !== undefined && this.options.verifyTransaction && producer) {
      if (!this.options.verifyTransaction(request.transactionalId, topic, request.partition, producer)) {
        throw new ClusterError(
          "INVALID_TXN_STATE",
          `${p.name} was not added to transaction '${request.transactionalId}'; call addPartitionsToTxn first`,
        );
      }
    }
    this.settleOwnCut(p);
    const info = p.appendAsLeader(request.batch, request.acks, this.partitionConfig(t));
    const throttleTimeMs = this.options.quotas.record(
      "produce",
      request.clientId ?? "",
      request.batch.length,
    );
    this.afterLeaderAppend(p);
    if (request.acks !== 0 && this.diskLatencyMs > 0) await this.awaitLocalFsync(p);
    // A duplicate is acknowledged like the original: only once the ISR has it.
    if (request.acks === -1) await this.awaitHighWatermark(p, info.lastOffset!, request.timeoutMs);
    return {
      baseOffset: info.firstOffset!,
      lastOffset: info.lastOffset!,
      logStartOffset: p.log.logStartOffset,
      duplicate: info.duplicate,
      throttleTimeMs,
      logAppendTimeMs: info.logAppendTimeMs ?? -1n,
    };
  }

  /**
   * Appends control batches (transaction markers, MIRROR_PID_RESET) on the leader on a coordinator's
   * behalf: allowed on read-only mirror partitions, refused elsewhere than on the leader. With `acks: -1`
   * (transaction markers: Kafka's WriteTxnMarkers appends with requiredAcks=-1) it is refused with
   * NOT_ENOUGH_REPLICAS, before anything is appended, while the ISR is under min.insync.replicas; waiting
   * for the high watermark is the caller's.
   */
  appendControlBatch(topic: string, partition: number, batch: Buffer, acks: 1 | -1 = 1): LogAppendInfo {
    this.checkRunning();
    const p = this.leaderReplica(topic, partition);
    this.settleOwnCut(p);
    const info = p.appendAsLeader(batch, acks, this.partitionConfig(this.image.topic(topic)!), "coordinator");
    this.afterLeaderAppend(p);
    return info;
  }

  /**
   * Resolves once the leader's high watermark passes `offset`: every in-sync replica has the log up to it,
   * as an acks=all write is acknowledged. Rejects with NOT_LEADER_OR_FOLLOWER when this broker stops
   * leading first, REQUEST_TIMED_OUT after `timeoutMs`.
   */
  awaitReplicated(topic: string, partition: number, offset: bigint, timeoutMs = 30_000): Promise<void> {
    this.checkRunning();
    return this.awaitHighWatermark(this.leaderReplica(topic, partition), offset, timeoutMs);
  }

  /** The mirror's append-as-is on the leader: fetched batches stored unchanged (offsets, epochs, CRC). */
  appendAsIs(
    topic: string,
    partition: number,
    batches: Buffer | readonly Buffer[],
    options: { transferOwnership?: boolean } = {},
  ): LogAppendInfo {
    this.checkRunning();
    const p = this.leaderReplica(topic, partition);
    this.settleOwnCut(p);
    const info = p.appendAsIsAsLeader(batches, options.transferOwnership ?? false);
    this.afterLeaderAppend(p);
    return info;
  }

  /**
   * DeleteRecords on the leader: moves the log start offset up to `offset` (at most the high watermark);
   * followers follow the leader's log start on their next fetch. Returns the new log start offset.
   */
  deleteRecords(topic: string, partition: number, offset: bigint, context: RequestContext = {}): bigint {
    this.checkRunning();
    this.options.authorizer.check({
      principal: context.principal ?? "User:ANONYMOUS",
      host: context.host,
      operation: "DELETE",
      resourceType: "TOPIC",
      resourceName: topic,
    });
    const p = this.leaderReplica(topic, partition);
    const start = p.log.deleteRecordsBefore(offset);
    this.notifyFollowers(p);
    return start;
  }

  /**
   * KIP-1279: a mirror's leader follows its source's log start (moved there by DeleteRecords or
   * retention), as a Kafka follower follows its leader's (`maybeIncrementLogStartOffset`): up to `offset`,
   * at most the high watermark, never down. No ACL check: the mirror engine runs inside the broker.
   * Followers follow on their next fetch. Returns the log start offset.
   */
  followSourceLogStart(topic: string, partition: number, offset: bigint): bigint {
    this.checkRunning();
    const p = this.leaderReplica(topic, partition);
    const target = offset < p.log.highWatermark ? offset : p.log.highWatermark;
    if (target <= p.log.logStartOffset) return p.log.logStartOffset;
    const start = p.log.deleteRecordsBefore(target);
    this.notifyFollowers(p);
    return start;
  }

  /**
   * Truncates the leader's log to `offset` (KIP-1279: a mirror aligning with its source). Followers learn
   * on their next fetch and truncate too; `followersTruncated` tells when every ISR member has.
   */
  truncateTo(topic: string, partition: number, offset: bigint): void {
    this.checkRunning();
    const p = this.leaderReplica(topic, partition);
    if (p.cutDrops(offset, false)) this.recordTruncation(p, offset, false);
    p.truncateAsLeader(offset);
    this.settleOwedTruncation(p, false);
    this.checkpointAfterCut(p);
    this.notifyFollowers(p);
  }

  /** Empties the leader's log and restarts it at `offset` (a mirror restarting from the source's log start). */
  truncateFullyAndStartAt(topic: string, partition: number, offset: bigint): void {
    this.checkRunning();
    const p = this.leaderReplica(topic, partition);
    // Also an empty log restarted below its end: a copy downstream may still hold what it had there.
    if (p.cutDrops(offset, true)) this.recordTruncation(p, offset, true);
    p.truncateFullyAsLeader(offset);
    // The leader owes its own cut too (see `recordTruncation`): made, it stores and reports it.
    this.settleOwedTruncation(p, false);
    this.checkpointAfterCut(p);
    this.notifyFollowers(p);
  }

  /**
   * Before a mirror cuts the leader's log, the controller records that every replica (the leader too, which
   * stores and reports it once its own cut is made) owes the same
   * cut (`ReplicaTruncationRecord`), so one that is down or outside the ISR now cannot come back holding
   * batches the leader dropped. Nothing is recorded when the leader's log loses nothing: a replica holding
   * more than the leader learns it from its next fetch (OFFSET_OUT_OF_RANGE).
   */
  private recordTruncation(p: Partition, offset: bigint, full: boolean): void {
    this.options.controller.recordReplicaTruncation(p.topic, p.partition, {
      leader: this.brokerId,
      leaderEpoch: p.leaderEpoch,
      truncationOffset: offset,
      full,
      previousLogEndOffset: p.log.logEndOffset,
    });
  }

  /** What `p`'s replica on this broker still owes of a mirror's truncations, per its current image. */
  private owedTruncation(p: Partition): PendingTruncation | undefined {
    return this.image.topicsById
      .get(p.topicId)
      ?.partitions[p.partition]?.pendingTruncations?.get(this.brokerId);
  }

  /**
   * Applies what `p`'s replica owes of a mirror's truncations (once per record) and reports it to the
   * controller: a follower before it fetches, a replica before it leads (then inside the controller's
   * delivery of a record, so the report waits for a scheduled task: `deferReport`). True when the log changed.
   */
  private settleOwedTruncation(p: Partition, deferReport: boolean): boolean {
    // Replaying, the image is not current: which stored cuts to keep cannot be told (see below).
    if (this.replaying) return false;
    const owed = this.owedTruncation(p);
    if (owed === undefined) return false;
    const replica = {
      topic: p.topic,
      partition: p.partition,
      key: this.keyOf(p.topicId, p.partition),
      log: p.log,
    };
    // Another replica's stored cut is kept while the image says it may still be owed, whether its log is
    // open or not (one whose opening failed, a failing disk, opens later and must not cut again). One of a
    // topic the image no longer has goes: a topic created again under its id records later (larger) ids.
    const changed = this.owedTruncations.apply(replica, owed, (key, id) => {
      const sep = key.lastIndexOf(":");
      const meta = this.image.topicsById.get(key.slice(0, sep) as Uuid)?.partitions[
        Number(key.slice(sep + 1))
      ];
      return meta !== undefined && settlesAny(meta.pendingTruncations?.get(this.brokerId), id);
    });
    const stillOwed = () =>
      this.running && this.partitions.get(replica.key) === p && this.owedTruncation(p)?.id === owed.id;
    this.owedTruncations.report(replica, owed, stillOwed, deferReport);
    if (changed) this.checkpointAfterCut(p);
    return changed;
  }

  /**
   * Before a leader appends: a cut it owes that it made but could not store (its own, the store failed on a
   * full disk) is stored first, so that a restart does not make it again over what it appends now (nothing
   * was appended since, so the cut itself changes nothing). Throws while the store fails: no append.
   */
  private settleOwnCut(p: Partition): void {
    if (this.owedTruncation(p) !== undefined) this.settleOwedTruncation(p, true);
  }

  /**
   * Applies what `p`'s replica owes before it leads. False when the cut failed with a storage error (a full
   * disk; reported once): the replica must not lead over batches the mirror cut, so the partition is
   * reconciled again after the replica fetch backoff, until the cut succeeds. Kafka would take the log
   * directory offline (and the controller elect another leader); here a freed disk needs no restart.
   */
  private settleBeforeLeading(p: Partition): boolean {
    const cut = () => this.settleOwedTruncation(p, true);
    if (this.retryingStorageWrite(`the owed truncation of ${p.name}`, cut)) return true;
    this.reconcileLater(p.topicId, p.partition);
    return false;
  }

  /**
   * Brings a partition in line with the current image again after the replica fetch backoff (one retry at
   * a time): the last try stopped at a storage error, and no metadata record may come to try it again.
   */
  private reconcileLater(topicId: Uuid, index: number): void {
    const name = `reconcile ${topicId}:${index}`;
    if (this.loops.has(name)) return;
    const retry = () => {
      this.loops.delete(name);
      const topic = this.image.topicsById.get(topicId);
      if (this.running && topic) this.reconcilePartition(topic, index);
    };
    this.loops.set(name, this.options.scheduler.schedule(retry, this.options.replicaFetchBackoffMs ?? 100));
  }

  /** True when every in-sync follower has fetched since the last cut, reporting an end no larger than the leader's. */
  followersTruncated(topic: string, partition: number): boolean {
    return this.leaderReplica(topic, partition).followersTruncated();
  }

  /** A consumer fetch (replica id -1): never past the high watermark, or the LSO for read_committed. */
  fetch(request: FetchRequest): FetchResponse {
    this.checkRunning();
    this.options.authorizer.check({
      principal: request.principal ?? "User:ANONYMOUS",
      host: request.host,
      operation: "READ",
      resourceType: "TOPIC",
      resourceName: request.topic,
    });
    const p = this.leaderReplica(request.topic, request.partition);
    p.checkLeader(request.currentLeaderEpoch ?? -1);
    const last = request.lastFetchedEpoch ?? UNDEFINED_EPOCH;
    const end = p.divergenceCheckFor(last);
    if (end) {
      if (end.epoch !== last || end.endOffset < request.fetchOffset) {
        return {
          recordSlices: [],
          sizeInBytes: 0,
          records: Buffer.alloc(0),
          highWatermark: p.log.highWatermark,
          lastStableOffset: p.log.lastStableOffset,
          logStartOffset: p.log.logStartOffset,
          abortedTransactions: [],
          divergingEpoch: { epoch: end.epoch, endOffset: end.endOffset },
          leaderEpoch: p.leaderEpoch,
          throttleTimeMs: 0,
        };
      }
    }
    const data = p.readForConsumer(request.fetchOffset, request.maxBytes, request.isolationLevel);
    const throttleTimeMs = this.options.quotas.record("fetch", request.clientId ?? "", data.sizeInBytes);
    return {
      recordSlices: data.recordSlices,
      sizeInBytes: data.sizeInBytes,
      get records(): Buffer {
        return data.records;
      },
      highWatermark: data.highWatermark,
      lastStableOffset: data.lastStableOffset,
      logStartOffset: data.logStartOffset,
      abortedTransactions: data.abortedTransactions,
      leaderEpoch: p.leaderEpoch,
      throttleTimeMs,
    };
  }

  /**
   * Resolves when the partition's high watermark passes `offset` (new data for a consumer at `offset`),
   * or after `timeoutMs` (Kafka's fetch.max.wait.ms) either way.
   */
  waitForData(topic: string, partition: number, offset: bigint, timeoutMs: number): Promise<void> {
    const p = this.replica(topic, partition);
    if (!p?.isLeader || p.log.highWatermark > offset) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        offset,
        resolve,
        reject: () => resolve(),
        cancel: () => {},
      };
      waiter.cancel = this.options.scheduler.schedule(
        () => this.removeWaiter(p, waiter, () => resolve()),
        timeoutMs,
      );
      this.addWaiter(p, waiter);
    });
  }

  /** ListOffsets: earliest (-2), latest (-1: the high watermark, or LSO for read_committed) or by timestamp. */
  listOffsets(
    topic: string,
    partition: number,
    timestamp: bigint,
    isolationLevel: IsolationLevel = "read_uncommitted",
  ): { offset: bigint; timestamp: bigint; leaderEpoch: number } {
    this.checkRunning();
    const p = this.leaderReplica(topic, partition);
    if (timestamp === -2n)
      return { offset: p.log.logStartOffset, timestamp: -1n, leaderEpoch: p.leaderEpoch };
    const bound = isolationLevel === "read_committed" ? p.log.lastStableOffset : p.log.highWatermark;
    // Kafka (KIP-207): a new leader whose high watermark has not yet reached the start of its epoch (its
    // followers have not fetched from it) does not know where the committed records end: answering its
    // lagging HW would tell a mirror that is caught up to it, without records the old leader acknowledged.
    const epochStart = p.isReadOnly(this.image.topic(topic)?.configs.get("mirror.name"))
      ? undefined
      : p.log.epochEntries().find((e) => e.epoch === p.leaderEpoch)?.startOffset;
    if (timestamp !== -2n && epochStart !== undefined && p.log.highWatermark < epochStart) {
      throw new ClusterError(
        "OFFSET_NOT_AVAILABLE",
        `${topic}-${partition}: the leader (epoch ${p.leaderEpoch}) has not yet learnt its high watermark (${p.log.highWatermark}, below its epoch start ${epochStart}); retry`,
      );
    }
    if (timestamp === -1n) return { offset: bound, timestamp: -1n, leaderEpoch: p.leaderEpoch };
    for (const batch of p.log.batches()) {
      if (batch.baseOffset >= bound) break;
      if (batch.isControl || batch.maxTimestamp < timestamp) continue;
      // Kafka answers with the first record at or after the timestamp, so the batch's records are read.
      for (const r of decodeRecords(batch)) {
        const offset = batch.baseOffset + BigInt(r.offsetDelta);
        const ts = batch.baseTimestamp + r.timestampDelta;
        if (offset < bound && ts >= timestamp)
          return { offset, timestamp: ts, leaderEpoch: batch.partitionLeaderEpoch };
      }
    }
    return { offset: -1n, timestamp: -1n, leaderEpoch: -1 };
  }

  /** OffsetsForLeaderEpoch on the leader: the end offset of `leaderEpoch` (KIP-101/279 semantics). */
  offsetsForLeaderEpoch(
    topic: string,
    partition: number,
    leaderEpoch: number,
    currentLeaderEpoch = -1,
  ): { leaderEpoch: number; endOffset: bigint } {
    this.checkRunning();
    const p = this.leaderReplica(topic, partition);
    p.checkLeader(currentLeaderEpoch);
    const end = p.log.endOffsetForEpoch(leaderEpoch);
    return { leaderEpoch: end.epoch, endOffset: end.endOffset };
  }

  /** A follower's fetch, answered by the leader (in-process replication). */
  handleReplicaFetch(
    topicId: Uuid,
    partition: number,
    followerId: number,
    fetchOffset: bigint,
    lastFetchedEpoch: number,
    maxBytes: number,
  ): ReplicaFetchResult {
    this.checkRunning();
    const p = this.partitions.get(this.keyOf(topicId, partition));
    if (!p)
      throw new ClusterError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${this.brokerId} hosts no ${topicId}-${partition}`,
      );
    const hwBefore = p.log.highWatermark;
    const result = p.fetchFromFollower(followerId, fetchOffset, lastFetchedEpoch, maxBytes);
    if (p.log.highWatermark !== hwBefore) {
      this.releaseWaiters(p);
      this.notifyFollowers(p, followerId);
    }
    this.maybeChangeIsr(p);
    return result;
  }

  /**
   * Wakes this broker's fetcher for a partition it follows (the leader has new data or a new HW). Returns
   * whether it follows the partition and runs (its fetch would have been waiting at the leader).
   */
  wakeReplicaFetch(topicId: Uuid, partition: number): boolean {
    const p = this.partitions.get(this.keyOf(topicId, partition));
    if (!p || !this.running || p.isLeader) return false;
    this.scheduleReplicaFetch(p, 0);
    return true;
  }

  /**
   * KIP-1279: sets or clears the read-only flag of a mirror partition. The flag lives in the metadata log
   * (the controller writes it), so every replica, this one after a restart included, refuses produces
   * until it is cleared. Nothing is written when the metadata already holds `readOnly`.
   */
  setReadOnly(topic: string, partition: number, readOnly: boolean): void {
    this.checkRunning();
    const meta = this.image.partition(topic, partition);
    if (!meta)
      throw new ClusterError(
        "UNKNOWN_TOPIC_OR_PARTITION",
        `${topic}-${partition} does not exist on this cluster; create the topic (or partition) first`,
      );
    if (meta.mirrorReadOnly === readOnly && !meta.mirrorReadOnlyByName) return;
    this.options.controller.setMirrorReadOnly(topic, partition, readOnly);
  }

  /**
   * One pass of Kafka's log cleaner and retention over every hosted replica: topics with `delete` in their
   * cleanup.policy lose whole segments past `retention.ms` / `retention.bytes`, those with `compact` are
   * compacted (`compact,delete`: both).
   */
  runLogCleaner(): void {
    for (const p of this.partitions.values()) {
      const t = this.image.topicsById.get(p.topicId);
      if (!t) continue;
      // A storage error (a full disk) skips this partition until the next pass; the others are cleaned.
      this.retryingStorageWrite(`log cleaner on ${p.name}`, () => {
        const policy = parseCleanupPolicy(topicConfigValue(t.configs, "cleanup.policy"));
        // compact,delete: compacted first, then old segments go by retention, as Kafka's cleaner thread
        // (cleanFilthiestLog, then deleteOldSegments): retention.bytes measures the compacted log.
        if (compacts(policy)) p.log.compact();
        if (deletesByRetention(policy)) {
          p.log.applyRetention({
            retentionMs: Number(topicConfigValue(t.configs, "retention.ms")),
            retentionBytes: Number(topicConfigValue(t.configs, "retention.bytes")),
          });
        }
      });
    }
  }

  /**
   * Kafka's PeriodicProducerExpirationCheck: every hosted replica, leader or follower, forgets the producers
   * idle for producer.id.expiration.ms (see `PartitionLog.removeExpiredProducers`).
   */
  removeExpiredProducers(): void {
    for (const p of this.partitions.values()) {
      // Rewriting the log start's producer snapshot can fail (a full disk): the next pass tries again.
      this.retryingStorageWrite(`producer expiration on ${p.name}`, () => p.log.removeExpiredProducers());
    }
  }

  /**
   * Writes every hosted partition's high watermark to the checkpoint file, and the leader epoch checkpoints
   * whose last write failed. A storage error leaves the last checkpoint in place (a restart then starts from
   * lower high watermarks, which replication raises again).
   */
  checkpointHighWatermarks(): void {
    const hws = new Map<string, bigint>();
    for (const p of this.partitions.values()) {
      hws.set(p.name, p.log.highWatermark);
      // A leader epoch checkpoint whose write failed (see `PartitionLog.saveEpochs`) is retried here.
      this.retryingStorageWrite(`the leader epoch checkpoint of ${p.name}`, () =>
        p.log.retryEpochCheckpoint(),
      );
    }
    const written = this.retryingStorageWrite(HW_CHECKPOINT_WRITE, () =>
      this.options.dataDir.writeCheckpoint(HIGH_WATERMARK_CHECKPOINT, formatHighWatermarks(hws)),
    );
    if (written) this.hwCheckpointOnDisk = hws;
  }

  /**
   * After a cut that took `p`'s log below the high watermark last checkpointed for it (a mirror aligning
   * its copy, a follower cutting the same, a divergence after an unclean election): the checkpoint is
   * written now rather than at the next interval. A crash in between would otherwise reopen the log below
   * its checkpointed high watermark, which counts as lost acknowledged records (`ENDS_BELOW_CHECKPOINT`):
   * every replica of a partition a mirror had just aligned came back out of the ISR and unfit to lead.
   */
  private checkpointAfterCut(p: Partition): void {
    const checkpointed = this.hwCheckpointOnDisk.get(p.name);
    if (checkpointed === undefined || p.log.logEndOffset >= checkpointed) return;
    // While the checkpoint cannot be written (a full disk), the periodic task retries it; not every fetch.
    if (this.failingWrites.has(HW_CHECKPOINT_WRITE)) return;
    this.checkpointHighWatermarks();
  }

  /**
   * Runs a scheduled broker task's write; a `KafkaStorageError` (a full or failing disk) is reported once
   * until the write succeeds again, and the task runs again at its next interval; false when it failed.
   * Kafka takes the log directory offline instead; here the broker keeps going, so a freed disk needs no
   * restart.
   */
  private retryingStorageWrite(what: string, write: () => void): boolean {
    try {
      write();
      this.failingWrites.delete(what);
      return true;
    } catch (error) {
      if (!(error instanceof KafkaStorageError)) throw error;
      if (this.failingWrites.has(what)) return false;
      this.failingWrites.add(what);
      this.logger.warn(
        { event: "storage.write_failed", brokerId: this.brokerId, task: what, error: error.message },
        `broker ${this.brokerId}: ${what} failed: ${error.message}. It is retried at its next interval; free space on the disk (or replace it).`,
      );
      return false;
    }
  }

  private stop(): void {
    this.running = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const cancel of this.loops.values()) cancel();
    this.loops.clear();
    for (const cancel of this.fetchScheduled.values()) cancel();
    this.fetchScheduled.clear();
    for (const p of this.partitions.values()) {
      this.failWaiters(p);
      p.log.close();
    }
    this.partitions.clear();
    this.owedTruncations.clear();
    this.replicaKeys.clear();
    this.image.topicsById.clear();
    this.image.topicIdsByName.clear();
  }

  private onMetadata(entry: MetadataLogEntry): void {
    const record = entry.record;
    const removed = record.type === "RemoveTopic" ? this.image.topicsById.get(record.topicId) : undefined;
    this.image.apply(record, entry.offset);
    if (!this.running) return;
    switch (record.type) {
      case "Partition":
      case "PartitionChange":
      case "MirrorReadOnly": {
        // A topic the replay removes later: not opened (a live topic of the same name owns the directory).
        if ((this.replayEnd?.lastRemoval.get(record.topicId) ?? -1) > entry.offset) return;
        const topic = this.image.topicsById.get(record.topicId);
        if (topic) this.reconcilePartition(topic, record.partition, record.type === "MirrorReadOnly");
        return;
      }
      case "Config": {
        // A topic's dynamic config reaches its open logs at once, as in Kafka (a log opened by the replay
        // took the configs of its Partition record's time: without this, a later change never applied).
        if (record.resourceType !== "topic") return;
        const id = this.image.topicIdsByName.get(record.resourceName);
        const topic = id === undefined ? undefined : this.image.topicsById.get(id);
        if (!topic) return;
        for (let i = 0; i < topic.partitions.length; i++) {
          const p = this.partitions.get(this.keyOf(topic.topicId, i));
          if (!p) continue;
          p.log.updateConfig(this.logConfigOf(topic));
          // A lowered min.insync.replicas frees a high watermark held under the old value (Kafka's leader
          // moves it at its followers' next fetch; ours fetch only when woken).
          if (!p.isLeader || this.replaying) continue;
          const hwBefore = p.log.highWatermark;
          p.maybeAdvanceHighWatermark();
          if (p.log.highWatermark !== hwBefore) {
            this.releaseWaiters(p);
            this.notifyFollowers(p);
          }
        }
        return;
      }
      case "FenceBroker":
        // What this broker's leaders knew of the fenced broker's fetches belongs to an incarnation that is
        // gone (Kafka's leader admits to the ISR only an unfenced broker whose fetch carries its current
        // broker epoch): it must fetch again before it may rejoin any ISR.
        for (const p of this.partitions.values()) if (p.isLeader) p.forgetFollower(record.brokerId);
        return;
      case "RemoveTopic":
        if (removed) this.removeTopic(removed);
        // Replayed: its replicas were not opened. What a deletion interrupted by a crash left under the
        // name goes now, and so does what a broker down at the removal kept: a removal past the checkpoint
        // was never handled here, and no replica was opened after it, so the directory is the removed
        // topic's. Otherwise a live topic of the name may own the directory (its id may be the same).
        if (
          removed &&
          this.replayEnd &&
          (!this.replayEnd.liveNames.has(removed.name) ||
            (this.replayEnd.removalsHandledTo !== undefined &&
              entry.offset > this.replayEnd.removalsHandledTo))
        ) {
          for (let i = 0; i < removed.partitions.length; i++) this.deleteLogOf(removed, i);
        }
        if (removed && (this.removalsDurableTo === undefined || entry.offset > this.removalsDurableTo)) {
          this.removedSinceCheckpoint.add(removed.name);
        }
        return;
      default:
        return;
    }
  }

  /**
   * Brings the local replica in line with the partition's metadata. `readOnlyOnly`: only the mirror
   * read-only flag changed (leader, epoch and ISR did not), so a follower has nothing new to fetch.
   */
  private reconcilePartition(topic: TopicMetadata, index: number, readOnlyOnly = false): void {
    const meta = topic.partitions[index];
    if (!meta?.replicas.includes(this.brokerId)) return;
    const k = this.keyOf(topic.topicId, index);
    let p = this.partitions.get(k);
    const existed = p !== undefined;
    const wasLeader = p?.isLeader ?? false;
    const oldEpoch = p?.leaderEpoch;
    if (!p) {
      const checkpointedHw = this.checkpointedHw.get(`${topic.name}-${index}`);
      let opened: { storage: LogStorage; bytesBefore: number; log: PartitionLog } | undefined;
      // A disk that is full or failing (the directory or partition.metadata cannot be written, recovery
      // cannot cut a torn tail): no replica yet; it is opened again later, not when the next record comes.
      const openReplicaLog = () => {
        // A log under the name of a topic removed since the checkpoint is opened only once that removal is
        // durable: a replay then never takes this log for the removed topic's (see `replayEnd`).
        if (this.removalsDurableTo === undefined || this.removedSinceCheckpoint.has(topic.name)) {
          // The checkpoint says every removal so far was handled: the logs whose deletion failed go first.
          for (const { topic: removed, partition } of this.logsToBeDeleted.values()) {
            this.deleteLog(removed, partition);
          }
          this.options.dataDir.writeCheckpoint(REMOVALS_CHECKPOINT, String(this.image.offset));
          this.removalsDurableTo = this.image.offset;
          this.removedSinceCheckpoint.clear();
        }
        const storage = this.options.dataDir.openLog(topic.name, index, topic.topicId);
        const bytesBefore = storedBytes(storage);
        try {
          const log = PartitionLog.open(storage, this.logConfigOf(topic), {
            highWatermark: checkpointedHw,
          });
          opened = { storage, bytesBefore, log };
        } catch (error) {
          storage.close();
          throw error;
        }
      };
      if (!this.retryingStorageWrite(`opening the log of ${topic.name}-${index}`, openReplicaLog)) {
        this.reconcileLater(topic.topicId, index);
        return;
      }
      const { storage, bytesBefore, log } = opened!;
      // The checkpoint describes the logs found at start: a log opened later under the name (the topic
      // deleted and created again, the replica moved away and back) is another log, and its end below that
      // value would read as a loss.
      this.checkpointedHw.delete(`${topic.name}-${index}`);
      const bytesDropped = bytesBefore - storedBytes(storage);
      // A log that ends below the high watermark this broker checkpointed lost acknowledged records too,
      // though recovery cut nothing: a write lost whole with the power (no fsync) leaves no torn bytes, the
      // segment just ends at an earlier batch. Led as it is, it would make the followers drop those records.
      const endsBelowCheckpoint = checkpointedHw !== undefined && log.logEndOffset < checkpointedHw;
      const recoveryLoss =
        bytesDropped > 0 || log.recovery.truncatedTail || endsBelowCheckpoint
          ? {
              offset: log.logEndOffset,
              bytesDropped,
              reason: log.recovery.truncatedTail?.reason ?? (bytesDropped > 0 ? "" : ENDS_BELOW_CHECKPOINT),
            }
          : undefined;
      p = new Partition(
        {
          topic: topic.name,
          topicId: topic.topicId,
          partition: index,
          brokerId: this.brokerId,
          log,
          meta,
          recoveryLoss,
          minInsyncReplicas: () => {
            const current = this.image.topicsById.get(topic.topicId) ?? topic;
            return this.minInsyncReplicasOf(current);
          },
        },
        this.options.clock,
      );
      if (recoveryLoss) this.reportRecoveryLoss(p, recoveryLoss, checkpointedHw);
      this.partitions.set(k, p);
    }
    // Before it records its epoch at its log end: a truncation it owes moves that end. One that fails (a full
    // disk) leaves the replica as it was, and the change is applied again later, whole.
    if (meta.leader === this.brokerId && !this.replaying && !this.settleBeforeLeading(p)) return;
    p.updateMetadata(meta, topic.configs.get("mirror.name"), this.replaying);
    const epochChanged = oldEpoch !== p.leaderEpoch;
    if (p.isLeader) {
      this.cancelReplicaFetch(p);
      if (!wasLeader || epochChanged) {
        // A new leader's high watermark may only move up from what it knows; followers report in.
        this.notifyFollowers(p);
        this.emitLeadership(p, true, wasLeader);
      }
      this.releaseWaiters(p);
    } else {
      if (wasLeader) {
        this.failWaiters(p);
        this.emitLeadership(p, false, false);
      }
      // A read-only flag change moves nothing a follower fetches (a mirror's failover clears it on every
      // partition: no fetch round per replica for it).
      if (p.leaderId >= 0 && !(readOnlyOnly && existed && !wasLeader)) this.scheduleReplicaFetch(p, 0);
    }
  }

  /**
   * The log settings a topic's configs give (segment.bytes, segment.ms, cleanup.policy, delete.retention.ms,
   * min.compaction.lag.ms).
   */
  private logConfigOf(topic: TopicMetadata): LogConfig {
    return {
      clock: this.options.clock,
      segmentBytes: Number(topicConfigValue(topic.configs, "segment.bytes")),
      segmentMs: Number(topicConfigValue(topic.configs, "segment.ms")),
      cleanupPolicy: parseCleanupPolicy(topicConfigValue(topic.configs, "cleanup.policy")),
      deleteRetentionMs: Number(topicConfigValue(topic.configs, "delete.retention.ms")),
      minCompactionLagMs: Number(topicConfigValue(topic.configs, "min.compaction.lag.ms")),
      ...(this.options.producerIdExpirationMs !== undefined && {
        producerIdExpirationMs: this.options.producerIdExpirationMs,
      }),
    };
  }

  /** A WARN, once per partition and leader epoch, for a follower append the leader's data failed. */
  private reportReplicaFetchFailure(p: Partition, error: unknown): void {
    const k = `${this.keyOf(p.topicId, p.partition)}@${p.leaderEpoch}`;
    if (this.failedReplicaFetches.has(k)) return;
    this.failedReplicaFetches.add(k);
    const message = error instanceof Error ? error.message : String(error);
    this.logger.warn(
      {
        event: "replica.fetch_failed",
        brokerId: this.brokerId,
        partition: p.name,
        leader: p.leaderId,
        leaderEpoch: p.leaderEpoch,
        logEndOffset: p.log.logEndOffset.toString(),
        error: message,
      },
      `broker ${this.brokerId}: ${p.name} cannot append what leader ${p.leaderId} (epoch ${p.leaderEpoch}) sent at offset ${p.log.logEndOffset}: ${message}. The replica stays out of the ISR and retries.`,
    );
  }

  /** Kafka's LogLoader WARN: what the recovery cut, so an operator knows a replica lost data. */
  private reportRecoveryLoss(p: Partition, loss: RecoveryLoss, checkpointedHw: bigint | undefined): void {
    this.logger.warn(
      {
        event: "log.recovery_truncated",
        brokerId: this.brokerId,
        partition: p.name,
        offset: loss.offset.toString(),
        bytesDropped: loss.bytesDropped,
        checkpointedHighWatermark: checkpointedHw?.toString(),
        reason: loss.reason,
      },
      loss.bytesDropped === 0 && loss.reason === ENDS_BELOW_CHECKPOINT
        ? `broker ${this.brokerId}: the log of ${p.name} ends at offset ${loss.offset}, below its checkpointed high watermark ${checkpointedHw}: acknowledged records are missing (lost whole, nothing torn). The replica leaves the ISR and fetches the rest from the leader.`
        : `broker ${this.brokerId}: log recovery of ${p.name} truncated it to offset ${loss.offset}, dropping ${loss.bytesDropped} bytes (${loss.reason || "log start past the recovered end"}; checkpointed high watermark ${checkpointedHw ?? "none"}). The replica leaves the ISR and fetches the rest from the leader.`,
    );
  }

  /** The `partitions` key of a topic-partition (the same string every time, so its hash is computed once). */
  private keyOf(topicId: Uuid, partition: number): string {
    let keys = this.replicaKeys.get(topicId);
    if (keys === undefined) {
      keys = [];
      this.replicaKeys.set(topicId, keys);
    }
    let k = keys[partition];
    if (k === undefined) {
      k = key(topicId, partition);
      keys[partition] = k;
    }
    return k;
  }

  private get logger(): ClusterLogger {
    return this.options.logger ?? CONSOLE_LOGGER;
  }

  private removeTopic(topic: TopicMetadata): void {
    for (const [k, p] of this.partitions) {
      if (p.topicId !== topic.topicId) continue;
      if (p.isLeader) this.emitLeadership(p, false, false);
      this.failWaiters(p);
      this.cancelReplicaFetch(p);
      p.log.close();
      this.partitions.delete(k);
    }
    this.replicaKeys.delete(topic.topicId);
    // Replayed: the replay decides (a live topic of the name may own the directories by now).
    if (this.replaying) return;
    // Every hosted partition's log, also one whose opening failed (a failing disk): its directory is there.
    topic.partitions.forEach((meta, i) => {
      if (meta.replicas.includes(this.brokerId)) this.deleteLogOf(topic, i);
    });
  }

  /** Deletes the log directory of a partition of a deleted topic; a failure is logged, not thrown. */
  private deleteLogOf(topic: TopicMetadata, partition: number): void {
    const name = `${topic.name}-${partition}`;
    // The high watermark checkpointed under the name was this log's: a topic created again under it (while
    // this broker was down, say) starts empty, which is no loss.
    this.checkpointedHw.delete(name);
    try {
      this.deleteLog(topic, partition);
    } catch (error) {
      // The other partitions are still deleted; the directory left here is deleted again before a log is
      // opened under a removed name (see `logsToBeDeleted`), and by a restart's replay.
      this.logsToBeDeleted.set(name, { topic, partition });
      this.logger.warn(
        { event: "storage.delete_failed", brokerId: this.brokerId, partition: name, error: String(error) },
        `broker ${this.brokerId}: deleting the log of ${name} failed: ${String(error)}. It is retried before a topic of a removed name is opened, and on restart.`,
      );
    }
  }

  /** Deletes the log directory of a partition of a deleted topic; throws KafkaStorageError if it failed. */
  private deleteLog(topic: TopicMetadata, partition: number): void {
    this.options.dataDir.deleteLog(topic.name, partition, topic.topicId);
    this.logsToBeDeleted.delete(`${topic.name}-${partition}`);
  }

  private scheduleReplicaFetch(p: Partition, delayMs: number): void {
    const k = this.keyOf(p.topicId, p.partition);
    if (this.fetchScheduled.has(k)) return;
    // A slow network between brokers: no replica fetch runs sooner than its latency.
    const latency = this.options.network.replicationLatency?.() ?? 0;
    const cancel = this.options.scheduler.schedule(
      () => {
        this.fetchScheduled.delete(k);
        // A truncation the fetch needs may fail on a full disk: the follower asks again after the backoff.
        if (!this.retryingStorageWrite(`the replica fetch of ${p.name}`, () => this.replicaFetchOnce(p))) {
          this.scheduleReplicaFetch(p, this.options.replicaFetchBackoffMs ?? 100);
        }
      },
      delayMs > latency ? delayMs : latency,
    );
    this.fetchScheduled.set(k, cancel);
  }

  private cancelReplicaFetch(p: Partition): void {
    const k = this.keyOf(p.topicId, p.partition);
    this.fetchScheduled.get(k)?.();
    this.fetchScheduled.delete(k);
  }

  /** One follower fetch (see `followerFetch`), then the checkpoint a cut it made needs now. */
  private replicaFetchOnce(p: Partition): void {
    try {
      this.followerFetch(p);
    } finally {
      this.checkpointAfterCut(p);
    }
  }

  /** One follower fetch: truncate where the logs diverged, append what the leader sent, follow its HW. */
  private followerFetch(p: Partition): void {
    if (
      !this.running ||
      p.isLeader ||
      p.leaderId < 0 ||
      this.partitions.get(this.keyOf(p.topicId, p.partition)) !== p
    ) {
      return;
    }
    const backoff = this.options.replicaFetchBackoffMs ?? 100;
    const leader = this.options.network.broker(p.leaderId, this.brokerId);
    if (!leader?.isRunning) {
      this.scheduleReplicaFetch(p, backoff);
      return;
    }
    const log = p.log;
    // A mirror cut the leader's log since this replica last fetched (or while it was down): cut the same.
    this.settleOwedTruncation(p, false);
    let result: ReplicaFetchResult;
    try {
      result = leader.handleReplicaFetch(
        p.topicId,
        p.partition,
        this.brokerId,
        log.logEndOffset,
        log.latestEpoch ?? UNDEFINED_EPOCH,
        this.options.replicaFetchMaxBytes ?? 1024 * 1024,
      );
    } catch (error) {
      if (error instanceof KafkaError && error.errorName === "OFFSET_OUT_OF_RANGE") {
        // As Kafka's follower: past the leader's end (the leader truncated, e.g. a mirror aligning to the
        // source), truncate to the leader's end; below its start, start over at the leader's log start.
        // Unknown to us right now (the leader's replica is gone): keep everything and ask again later.
        const leaderReplica = leader.replica(p.topic, p.partition);
        const leaderLog = leaderReplica?.log;
        if (!leaderReplica || !leaderLog) {
          this.scheduleReplicaFetch(p, backoff);
          return;
        }
        if (log.logEndOffset > leaderLog.logEndOffset) {
          const loss = leaderReplica.recoveryLoss;
          if (loss && this.refuseTruncation(p, leaderLog.logEndOffset, loss)) return;
          log.truncateTo(leaderLog.logEndOffset);
        } else if (log.logEndOffset < leaderLog.logStartOffset) {
          const loss = leaderReplica.recoveryLoss;
          if (loss && this.refuseTruncation(p, log.logStartOffset, loss)) return;
          log.truncateFullyAndStartAt(leaderLog.logStartOffset);
        }
        this.scheduleReplicaFetch(p, 0);
      } else this.scheduleReplicaFetch(p, backoff);
      return;
    }
    if (result.divergingEpoch) {
      // Kafka's follower rule (an UNDEFINED answer truncates to the high watermark, never below it).
      const target = divergenceTruncationOffset(log, result.divergingEpoch);
      const loss = result.leaderLostData ? leader.replica(p.topic, p.partition)?.recoveryLoss : undefined;
      if (result.leaderLostData && this.refuseTruncation(p, target, loss)) return;
      const before = { leo: log.logEndOffset, epoch: log.latestEpoch };
      log.truncateTo(target);
      // The same answer again would change nothing: wait before asking again instead of spinning.
      const changed = log.logEndOffset !== before.leo || log.latestEpoch !== before.epoch;
      this.scheduleReplicaFetch(p, changed ? 0 : backoff);
      return;
    }
    const hwBefore = log.highWatermark;
    // The slices are the leader's stored bytes: the follower stores its own copy, as each broker has its own
    // disk, so damage to one replica's stored bytes (a corrupt segment) never reaches the others.
    let appended: { batchCount: number };
    try {
      appended = appendFromLeader(log, result.recordSlices);
    } catch (error) {
      if (
        error instanceof UnexpectedAppendOffsetError &&
        error.firstOffset < log.logEndOffset &&
        error.firstOffset >= log.logStartOffset
      ) {
        // The leader's batch holding our log end begins below it: the logs differ from that batch on,
        // although the epochs agreed (a mirror truncated the leader's log, then stored source batches
        // whose epoch numbers this replica holds for batches of its own). As after a diverging-epoch
        // answer, truncate to that batch and fetch again.
        const loss = result.leaderLostData ? leader.replica(p.topic, p.partition)?.recoveryLoss : undefined;
        if (result.leaderLostData && this.refuseTruncation(p, error.firstOffset, loss)) return;
        log.truncateTo(error.firstOffset);
        this.scheduleReplicaFetch(p, 0);
        return;
      }
      // Kafka's fetcher: an error processing a partition's data delays that partition and logs it; it
      // never stops the broker (a throw here would end the process). The replica falls out of the ISR.
      this.reportReplicaFetchFailure(p, error);
      this.scheduleReplicaFetch(p, backoff);
      return;
    }
    const hw = result.highWatermark < log.logEndOffset ? result.highWatermark : log.logEndOffset;
    if (hw > log.highWatermark) log.updateHighWatermark(hw);
    // The leader's log start moved (DeleteRecords or retention): follow it within what is replicated here.
    const start = result.logStartOffset < log.highWatermark ? result.logStartOffset : log.highWatermark;
    if (start > log.logStartOffset) log.deleteRecordsBefore(start);
    // A slow disk: the next fetch (which reports the new log end to the leader) waits for the fsync.
    if (appended.batchCount > 0) this.scheduleReplicaFetch(p, this.diskLatencyMs);
    else if (log.highWatermark !== hwBefore) this.scheduleReplicaFetch(p, 0);
    // Kafka's followers fetch all the time; ours fetch when woken. One out of the ISR keeps asking while
    // it has nothing new, as the leader readmits only a follower fetching now: woken by nothing, it stayed
    // out of an idle partition's ISR for good (soak `failback` FC_SEED=291 x30, after a restart of every
    // broker over a slow network and a controller failover).
    else if (!p.isr.includes(this.brokerId)) this.scheduleReplicaFetch(p, FOLLOWER_IDLE_FETCH_MS);
  }

  /**
   * A leader that lost data on recovery asks this follower to truncate to `target`: below the follower's
   * high watermark that would destroy acknowledged records this replica still holds, and so would dropping
   * records at or past the offset where the leader's recovery cut its log (`loss.offset`): the leader lost
   * them, so they may be committed records only this replica still has, whatever its own (possibly stale or
   * never checkpointed) high watermark says. It refuses (logged once per leader epoch) and retries after
   * the backoff, until a leader with the full log takes over. Returns true when it refused.
   */
  private refuseTruncation(p: Partition, target: bigint, loss?: RecoveryLoss): boolean {
    const hw = p.log.highWatermark;
    const holdsLost = loss !== undefined && p.log.logEndOffset > loss.offset;
    if (target >= hw && !(holdsLost && target < p.log.logEndOffset)) return false;
    const k = `${this.keyOf(p.topicId, p.partition)}@${p.leaderEpoch}`;
    if (!this.refusedTruncations.has(k)) {
      this.refusedTruncations.add(k);
      this.logger.warn(
        {
          event: "replica.truncation_refused",
          brokerId: this.brokerId,
          partition: p.name,
          leader: p.leaderId,
          leaderEpoch: p.leaderEpoch,
          offset: target.toString(),
          highWatermark: hw.toString(),
        },
        `broker ${this.brokerId}: ${p.name} will not truncate to ${target} below its high watermark ${hw}: leader ${p.leaderId} (epoch ${p.leaderEpoch}) lost data on log recovery; keeping the acknowledged records until a replica with the full log leads`,
      );
    }
    this.scheduleReplicaFetch(p, this.options.replicaFetchBackoffMs ?? 100);
    return true;
  }

  /** Waits out the slow disk's fsync after a leader append; fails if the broker stopped leading meanwhile. */
  private async awaitLocalFsync(p: Partition): Promise<void> {
    const ms = this.diskLatencyMs;
    await new Promise<void>((resolve) => this.options.scheduler.schedule(resolve, ms));
    if (!this.running || !p.isLeader || this.partitions.get(this.keyOf(p.topicId, p.partition)) !== p) {
      throw new ClusterError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${this.brokerId} stopped leading ${p.name} while its slow disk synced the write (${ms} ms); retry on the new leader`,
      );
    }
  }

  private afterLeaderAppend(p: Partition): void {
    this.notifyFollowers(p);
    this.releaseWaiters(p);
  }

  private notifyFollowers(p: Partition, except?: number): void {
    for (const r of p.replicas) {
      if (r === this.brokerId || r === except) continue;
      if (this.options.network.broker(r, this.brokerId)?.wakeReplicaFetch(p.topicId, p.partition) === true) {
        p.answerParkedFetch(r);
      }
    }
  }

  private maybeChangeIsr(p: Partition): void {
    const t = this.image.topicsById.get(p.topicId);
    if (!t) return;
    const isr = p.proposedIsr(this.partitionConfig(t));
    if (!isr) return;
    try {
      this.options.controller.alterPartition(p.topic, p.partition, {
        leader: this.brokerId,
        leaderEpoch: p.leaderEpoch,
        isr,
      });
    } catch {
      // A stale leader's proposal is refused; the metadata feed will tell this broker what it is now.
    }
  }

  private maybeShrinkIsr(): void {
    for (const p of this.partitions.values()) if (p.isLeader) this.maybeChangeIsr(p);
  }

  private awaitHighWatermark(p: Partition, lastOffset: bigint, timeoutMs = 30_000): Promise<void> {
    if (p.log.highWatermark > lastOffset) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { offset: lastOffset, resolve, reject, cancel: () => {} };
      waiter.cancel = this.options.scheduler.schedule(
        () =>
          this.removeWaiter(p, waiter, () =>
            reject(
              new ClusterError(
                "REQUEST_TIMED_OUT",
                `${p.name}: the in-sync replicas did not acknowledge offset ${lastOffset} within ${timeoutMs} ms; the write may still be replicated, retry with idempotence`,
              ),
            ),
          ),
        timeoutMs,
      );
      this.addWaiter(p, waiter);
    });
  }

  private addWaiter(p: Partition, waiter: Waiter): void {
    const k = this.keyOf(p.topicId, p.partition);
    const list = this.waiters.get(k) ?? [];
    list.push(waiter);
    this.waiters.set(k, list);
  }

  private removeWaiter(p: Partition, waiter: Waiter, then: () => void): void {
    const k = this.keyOf(p.topicId, p.partition);
    const list = this.waiters.get(k);
    const i = list?.indexOf(waiter) ?? -1;
    if (list && i >= 0) {
      list.splice(i, 1);
      then();
    }
  }

  private releaseWaiters(p: Partition): void {
    const k = this.keyOf(p.topicId, p.partition);
    const list = this.waiters.get(k);
    if (!list) return;
    const hw = p.log.highWatermark;
    const remaining = list.filter((w) => {
      if (hw <= w.offset) return true;
      w.cancel();
      w.resolve();
      return false;
    });
    this.waiters.set(k, remaining);
  }

  private failWaiters(p: Partition): void {
    const k = this.keyOf(p.topicId, p.partition);
    for (const w of this.waiters.get(k) ?? []) {
      w.cancel();
      w.reject(
        new ClusterError(
          "NOT_LEADER_OR_FOLLOWER",
          `broker ${this.brokerId} stopped leading ${p.name} before the write was acknowledged; retry on the new leader`,
        ),
      );
    }
    this.waiters.delete(k);
  }

  private emitLeadership(p: Partition, elected: boolean, epochBump: boolean): void {
    const change: LeadershipChange = {
      topic: p.topic,
      topicId: p.topicId,
      partition: p.partition,
      leaderEpoch: p.leaderEpoch,
      elected,
      epochBump,
    };
    for (const l of this.leadershipListeners) l(change);
  }

  private leaderReplica(topic: string, partition: number): Partition {
    const t = this.image.topic(topic);
    if (!t?.partitions[partition]) {
      throw new ClusterError(
        "UNKNOWN_TOPIC_OR_PARTITION",
        `${topic}-${partition} does not exist on this cluster; create the topic (or partition) first`,
      );
    }
    const p = this.partitions.get(this.keyOf(t.topicId, partition));
    if (!p?.isLeader) {
      throw new ClusterError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${this.brokerId} is not the leader of ${topic}-${partition} (leader is ${t.partitions[partition]!.leader}); refresh metadata and retry`,
      );
    }
    return p;
  }

  /** The topic's min.insync.replicas: its own config, else the broker's (Kafka's broker default). */
  private minInsyncReplicasOf(t: TopicMetadata): number {
    const own = t.configs.get("min.insync.replicas");
    if (own !== undefined) return Number(own);
    return this.options.minInsyncReplicas ?? Number(topicConfigValue(t.configs, "min.insync.replicas"));
  }

  private partitionConfig(t: TopicMetadata): PartitionConfig {
    return {
      minInsyncReplicas: this.minInsyncReplicasOf(t),
      replicaLagTimeMaxMs: this.options.replicaLagTimeMaxMs ?? 30_000,
      messageTimestampType:
        topicConfigValue(t.configs, "message.timestamp.type") === "LogAppendTime"
          ? "LogAppendTime"
          : "CreateTime",
    };
  }

  private checkRunning(): void {
    if (!this.running) {
      throw new ClusterError(
        "BROKER_NOT_AVAILABLE",
        `broker ${this.brokerId} is not running; use another broker`,
      );
    }
  }

  /** Runs `task` every `intervalMs` while the broker runs (Kafka's scheduled broker tasks). */
  private every(name: string, intervalMs: number, task: () => void): void {
    const tick = () => {
      if (!this.running) return;
      try {
        task();
      } catch (error) {
        // As Kafka's scheduler: a task that throws is reported and runs again at its next interval (a
        // throw used to end the loop for good, silently: one bad partition stopped the cleaner everywhere).
        const message = error instanceof Error ? error.message : String(error);
        this.logger.warn(
          { event: "broker.task_failed", broker: this.brokerId, task: name, error: message },
          `broker ${this.brokerId}: its ${name} task failed (${message}); it runs again in ${intervalMs} ms`,
        );
      }
      this.loops.set(name, this.options.scheduler.schedule(tick, intervalMs));
    };
    this.loops.set(name, this.options.scheduler.schedule(tick, intervalMs));
  }
}

/** Kafka's producer.id.expiration.check.interval.ms default: 10 minutes. */
const PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = 600_000;

/** What a failed high watermark checkpoint write is reported as (and remembered by, until it succeeds). */
const HW_CHECKPOINT_WRITE = "the high watermark checkpoint";

/** `RecoveryLoss.reason` of a log that recovery cut nothing of, yet ends below its checkpointed high watermark. */
const ENDS_BELOW_CHECKPOINT = "the log ends below the checkpointed high watermark";

/** Bytes of raw batches in a log's segments. */
function storedBytes(storage: LogStorage): number {
  return storage.segments().reduce((sum, seg) => sum + seg.sizeInBytes, 0);
}

function key(topicId: Uuid, partition: number): string {
  return `${topicId}:${partition}`;
}

/** True when a batch's header has the transactional flag (false if too short: the append refuses it as corrupt). */
function isTransactionalBatch(batch: Buffer): boolean {
  if (batch.length < RecordBatchLayout.RECORD_BATCH_OVERHEAD) return false;
  const attributes = batch.readInt16BE(RecordBatchLayout.ATTRIBUTES_OFFSET);
  return (attributes & RecordBatchLayout.TRANSACTIONAL_FLAG_MASK) !== 0;
}

/** The producer id and epoch in a batch's header; undefined if too short (the append refuses it as corrupt). */
function batchProducer(batch: Buffer): { producerId: bigint; producerEpoch: number } | undefined {
  if (batch.length < RecordBatchLayout.RECORD_BATCH_OVERHEAD) return undefined;
  return {
    producerId: batch.readBigInt64BE(RecordBatchLayout.PRODUCER_ID_OFFSET),
    producerEpoch: batch.readInt16BE(RecordBatchLayout.PRODUCER_EPOCH_OFFSET),
  };
}

/**
 * Why a produce to a mirror topic is refused, in the operator's words: the mirror's name and whether it is
 * paused, never the internal `mirror.name` value with its `.paused` / `.removed` suffix.
 */
function readOnlyMessage(partition: string, mirrorNameConfig: string): string {
  const suffix = [".paused", ".removed"].find((s) => mirrorNameConfig.endsWith(s));
  const mirror = suffix ? mirrorNameConfig.slice(0, -suffix.length) : mirrorNameConfig;
  if (suffix === ".removed") {
    // Already removed: the failover is under way, and waiting is all there is to do.
    return `${partition} is being failed over by mirror '${mirror}' and read-only until the failover ends (its ABORT markers and PID reset are written): retry once it is STOPPED (kafka-mirrors --describe --mirror ${mirror}, or whenState('${mirror}', 'STOPPED'))`;
  }
  const doing = suffix === ".paused" ? "paused in" : "mirrored by";
  return `${partition} is ${doing} mirror '${mirror}' and read-only until it is failed over; remove it from the mirror (kafka-mirrors --remove) to make it writable`;
}

/**
 * A follower's append of what its leader sent, as Kafka's `Partition.appendRecordsToFollowerOrFutureReplica`:
 * when the leader's log start falls inside a batch (DeleteRecords, or a mirror's copy of a source whose log
 * start does) and this replica's log is empty and starts there (it started over at the leader's log start),
 * the leader sends that whole batch, which begins below the log end. The log then starts over at the batch's
 * base offset and takes it whole; its log start follows the leader's again after the append. Anything else
 * throws as `appendAsFollower` does.
 */
function appendFromLeader(log: PartitionLog, slices: Parameters<PartitionLog["appendAsFollower"]>[0]) {
  try {
    return log.appendAsFollower(slices);
  } catch (error) {
    // Kafka's condition: an empty log, and a first batch that begins below its end and holds it.
    const empty = log.logEndOffset === log.logStartOffset;
    const holdsEnd =
      error instanceof UnexpectedAppendOffsetError &&
      error.firstOffset < log.logEndOffset &&
      error.firstBatchLastOffset !== undefined &&
      error.firstBatchLastOffset >= log.logEndOffset;
    if (!empty || !holdsEnd) throw error;
    log.truncateFullyAndStartAt(error.firstOffset);
    return log.appendAsFollower(slices);
  }
}

/** The data dir's checkpoint of the metadata offset up to which every topic removal was handled there. */
const REMOVALS_CHECKPOINT = "removed-topics-checkpoint";

/**
 * The metadata offset `REMOVALS_CHECKPOINT` holds; undefined when there is none or it is not one (an empty
 * or damaged file must not read as offset 0: a replay would take every later removal as never handled here).
 */
function parseRemovalsCheckpoint(text: string | undefined): number | undefined {
  const offset = text === undefined || !/^-?\d+$/.test(text.trim()) ? Number.NaN : Number(text.trim());
  return Number.isSafeInteger(offset) ? offset : undefined;
}

/** What the end of a metadata log holds that a replay of it needs ahead (see `Broker.replayEnd`). */
function replayEndOf(log: readonly MetadataLogEntry[]): {
  lastRemoval: Map<Uuid, number>;
  liveNames: Set<string>;
} {
  const lastRemoval = new Map<Uuid, number>();
  const names = new Map<Uuid, string>();
  for (const { offset, record } of log) {
    if (record.type === "Topic") names.set(record.topicId, record.name);
    else if (record.type === "RemoveTopic") {
      lastRemoval.set(record.topicId, offset);
      names.delete(record.topicId);
    }
  }
  return { lastRemoval, liveNames: new Set(names.values()) };
}
