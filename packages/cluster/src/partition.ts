import {
  type FetchDataInfo,
  type IsolationLevel,
  type LogAppendInfo,
  type PartitionLog,
  UNDEFINED_EPOCH,
} from "@cluster-mirror/log";
import type { Clock } from "./clock";
import { ClusterError } from "./errors";
import type { PartitionMetadata } from "./metadata-image";
import { isMirrorReadOnly } from "./mirror-read-only";
import type { Uuid } from "./uuid";

/** What the leader knows of one follower (Kafka's ReplicaState). */
interface FollowerState {
  logEndOffset: bigint;
  /** Last time the follower fetched at all. */
  lastFetchTimeMs: number;
  /** The leader's log end offset when it answered that fetch (Kafka's `lastFetchLeaderLogEndOffset`). */
  lastFetchLeaderLogEndOffset: bigint;
  /** Last time the follower's fetch reached the leader's log end offset. */
  lastCaughtUpTimeMs: number;
  /**
   * Set when a mirror cut the leader's log (KIP-1279) after the follower's last fetch: the end it reported
   * may hold batches the cut dropped, so it counts as at most the cut until the follower fetches again.
   */
  cutSinceFetch: boolean;
  /**
   * The follower's last fetch was at the leader's log end and got nothing: Kafka's follower would have that
   * fetch parked at the leader until new data arrives (and sends another every `replica.fetch.wait.max.ms`
   * while none does). Ours fetch when woken instead, so the leader counts such a follower as caught up until
   * it wakes it (`answerParkedFetch`).
   */
  parkedAtEnd: boolean;
  /** When the leader last proposed the follower for the ISR (see `lagging`). */
  joinedIsrAtMs?: number;
}

/** The answer to a follower's fetch: batches, or where the follower's log diverged from the leader's. */
export interface ReplicaFetchResult {
  /** Whole batches, as slices of the leader's stored bytes (no copy with memory storage). */
  recordSlices: readonly Buffer[];
  highWatermark: bigint;
  logStartOffset: bigint;
  /** The leader's log end offset. */
  logEndOffset: bigint;
  /** Set when the follower's last fetched epoch ends earlier on the leader: truncate to `endOffset` first. */
  divergingEpoch?: { epoch: number; endOffset: bigint };
  /**
   * True when this leader's log lost data on recovery (it led as the last ISR member): a follower must not
   * truncate committed records (below its high watermark) to match it.
   */
  leaderLostData?: boolean;
}

/** What a log recovery dropped when the replica was opened (a corrupt or torn segment). */
export interface RecoveryLoss {
  /** The recovered log end offset: records from here on were cut. */
  offset: bigint;
  bytesDropped: number;
  /**
   * Why the scan stopped (the corrupt batch), that the log ends below the checkpointed high watermark, or
   * empty when the log start passed the recovered end.
   */
  reason: string;
}

/** Settings the partition reads from the topic's configs. */
export interface PartitionConfig {
  minInsyncReplicas: number;
  /** Kafka's `replica.lag.time.max.ms`. */
  replicaLagTimeMaxMs: number;
  /** The topic's `message.timestamp.type` (default CreateTime). */
  messageTimestampType?: "CreateTime" | "LogAppendTime";
}

/**
 * One replica of a topic partition on one broker (Kafka's `Partition`): the log, whether this broker
 * leads it and at which epoch, and, on the leader, what each follower has replicated, from which it moves
 * the high watermark and proposes ISR changes.
 */
export class Partition {
  readonly topic: string;
  readonly topicId: Uuid;
  readonly partition: number;
  readonly brokerId: number;
  readonly log: PartitionLog;
  private meta: PartitionMetadata;
  private readonly followers = new Map<number, FollowerState>();
  /** What recovery dropped from this replica's log, until it is back in the ISR (see `recoveryLoss`). */
  private loss: RecoveryLoss | undefined;
  private readonly minInsyncReplicas: () => number;
  /**
   * Where this leader's epoch starts: its log end when it took the lead at that epoch (Kafka's
   * `leaderEpochStartOffsetOpt`, set in `makeLeader`), at most where a mirror cut its log since. Kept here,
   * not read from the leader epoch cache: a read-only mirror partition's cache holds the source's epochs,
   * whose numbers may be this leader's epoch with a start far below (or a promoted one's, above its own).
   */
  private epochStart: { epoch: number; offset: bigint } | undefined;

  constructor(
    init: {
      topic: string;
      topicId: Uuid;
      partition: number;
      brokerId: number;
      log: PartitionLog;
      meta: PartitionMetadata;
      /** What recovery dropped from this replica's log when it was opened, if anything. */
      recoveryLoss?: RecoveryLoss;
      /** The topic's current `min.insync.replicas` (read at each use: a config change applies at once). */
      minInsyncReplicas?: () => number;
    },
    private readonly clock: Clock,
  ) {
    this.loss = init.recoveryLoss;
    this.minInsyncReplicas = init.minInsyncReplicas ?? (() => 1);
    this.topic = init.topic;
    this.topicId = init.topicId;
    this.partition = init.partition;
    this.brokerId = init.brokerId;
    this.log = init.log;
    this.meta = { ...init.meta };
    this.resetFollowers();
  }

  /** `topic-partition`, as Kafka prints it. */
  get name(): string {
    return `${this.topic}-${this.partition}`;
  }
  get isLeader(): boolean {
    return this.meta.leader === this.brokerId;
  }
  get leaderId(): number {
    return this.meta.leader;
  }
  get leaderEpoch(): number {
    return this.meta.leaderEpoch;
  }
  get isr(): readonly number[] {
    return this.meta.isr;
  }
  get replicas(): readonly number[] {
    return this.meta.replicas;
  }
  get partitionEpoch(): number {
    return this.meta.partitionEpoch;
  }

  /**
   * Set while this replica may miss acknowledged records because its log recovery dropped data; cleared
   * once it is back in the ISR after having left it (the leader judged it caught up).
   */
  get recoveryLoss(): RecoveryLoss | undefined {
    return this.loss;
  }

  /**
   * Takes the controller's latest view of this partition; a new leader epoch resets follower tracking.
   * A new leader records its epoch at its log end in the leader-epoch cache, as Kafka's makeLeader does,
   * so it can answer every epoch a follower or mirror has fetched (never UNDEFINED for an epoch it
   * succeeded); a read-only mirror partition does not, its cache holds the source's epoch history.
   * `replaying`: the record comes from the replay of the metadata log at the broker's start.
   */
  updateMetadata(meta: PartitionMetadata, mirrorName?: string, replaying = false): void {
    const newEpoch = meta.leaderEpoch !== this.meta.leaderEpoch;
    // A rejoin replayed from the metadata log happened before this start: it says nothing of this log.
    if (
      !replaying &&
      this.loss &&
      meta.isr.includes(this.brokerId) &&
      !this.meta.isr.includes(this.brokerId)
    ) {
      this.loss = undefined;
    }
    this.meta = { ...meta };
    if (newEpoch) this.resetFollowers();
    // Idempotent, so a replica opened as leader (a restart: no epoch change seen) records it too. Not while
    // the broker replays the metadata log: an old record would put its epoch at today's log end, with the
    // read-only flag of its time (a mirror partition, writable back then, would get a local epoch after
    // the mirrored batches and capture it as its LME: FC_SEED=195); the broker records the current epoch
    // once the replay is over.
    if (this.isLeader && !replaying && !this.isReadOnly(mirrorName))
      this.log.assignEpochStartOffset(meta.leaderEpoch, this.log.logEndOffset);
    if (!this.isLeader) this.epochStart = undefined;
    else if (!replaying && this.epochStart?.epoch !== meta.leaderEpoch)
      this.epochStart = { epoch: meta.leaderEpoch, offset: this.log.logEndOffset };
    if (this.isLeader) this.maybeAdvanceHighWatermark();
  }

  /** A leader starts knowing nothing of its followers: they report their log end offsets by fetching. */
  private resetFollowers(): void {
    this.followers.clear();
    if (!this.isLeader) return;
    for (const r of this.meta.replicas) {
      if (r !== this.brokerId) {
        this.followers.set(r, {
          logEndOffset: -1n,
          lastFetchTimeMs: -1,
          lastFetchLeaderLogEndOffset: -1n,
          lastCaughtUpTimeMs: this.clock.now(),
          cutSinceFetch: false,
          parkedAtEnd: false,
        });
      }
    }
  }

  /**
   * Whether produces are refused with READ_ONLY_TOPIC (KIP-1279), given the topic's `mirror.name` config:
   * derived from the metadata log only (see `isMirrorReadOnly`), never from state of this process, so a
   * restarted replica answers as the others do.
   */
  isReadOnly(mirrorName: string | undefined): boolean {
    return isMirrorReadOnly(this.meta, mirrorName);
  }

  /** Checks that this broker leads the partition at `leaderEpoch` (-1 = any), as Kafka's request handling does. */
  checkLeader(leaderEpoch = -1): void {
    if (!this.isLeader) {
      throw new ClusterError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${this.brokerId} is not the leader of ${this.name} (leader is ${this.meta.leader}); refresh metadata and retry`,
      );
    }
    if (leaderEpoch >= 0 && leaderEpoch < this.meta.leaderEpoch) {
      throw new ClusterError(
        "FENCED_LEADER_EPOCH",
        `${this.name}: request epoch ${leaderEpoch} is older than the leader's ${this.meta.leaderEpoch}; refresh metadata`,
      );
    }
    if (leaderEpoch > this.meta.leaderEpoch) {
      throw new ClusterError(
        "UNKNOWN_LEADER_EPOCH",
        `${this.name}: request epoch ${leaderEpoch} is newer than this broker knows (${this.meta.leaderEpoch}); retry`,
      );
    }
  }

  /**
   * Appends a produced batch as leader. `acks: -1` requires the ISR to have at least `min.insync.replicas`
   * members (NOT_ENOUGH_REPLICAS otherwise); waiting for the high watermark is the caller's.
   */
  appendAsLeader(
    batch: Buffer,
    acks: number,
    config: PartitionConfig,
    origin: "client" | "coordinator" = "client",
  ): LogAppendInfo {
    this.checkLeader();
    const minIsr = this.effectiveMinIsr(config.minInsyncReplicas);
    if (acks === -1 && this.meta.isr.length < minIsr) {
      throw new ClusterError(
        "NOT_ENOUGH_REPLICAS",
        `${this.name} has ${this.meta.isr.length} in-sync replicas, fewer than min.insync.replicas=${minIsr}`,
      );
    }
    // LogAppendTime: the leader stamps its clock into the batch (Kafka's LogValidator); followers and
    // mirrors copy the stamped bytes as they are.
    const logAppendTimeMs =
      config.messageTimestampType === "LogAppendTime" ? BigInt(this.clock.now()) : undefined;
    const info = this.log.appendAsLeader(batch, this.meta.leaderEpoch, { origin, logAppendTimeMs });
    this.maybeAdvanceHighWatermark();
    return info;
  }

  /**
   * Appends batches unchanged on the leader (the mirror's append-as-is), then moves the high watermark.
   * `transferOwnership`: the caller never writes to `batches` again, so the log may keep them uncopied.
   */
  appendAsIsAsLeader(batches: Buffer | readonly Buffer[], transferOwnership = false): LogAppendInfo {
    this.checkLeader();
    const info = this.log.appendAsIs(batches, { transferOwnership });
    this.maybeAdvanceHighWatermark();
    return info;
  }

  /** A consumer fetch on the leader. */
  readForConsumer(
    offset: bigint,
    maxBytes: number,
    isolation: IsolationLevel,
    leaderEpoch = -1,
  ): FetchDataInfo {
    this.checkLeader(leaderEpoch);
    return this.log.read(offset, maxBytes, isolation);
  }

  /**
   * A follower's fetch on the leader. Records the follower's log end offset (its fetch offset), which may
   * move the high watermark; answers with where the follower diverged when its `lastFetchedEpoch` ends
   * earlier here (KIP-595 style), else with the next batches.
   */
  fetchFromFollower(
    followerId: number,
    fetchOffset: bigint,
    lastFetchedEpoch: number,
    maxBytes: number,
  ): ReplicaFetchResult {
    this.checkLeader();
    const follower = this.followers.get(followerId);
    if (!follower) {
      throw new ClusterError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${followerId} is not a replica of ${this.name}`,
      );
    }
    const end = this.divergenceCheckFor(lastFetchedEpoch);
    if (end) {
      if (end.epoch !== lastFetchedEpoch || end.endOffset < fetchOffset) {
        return {
          recordSlices: [],
          highWatermark: this.log.highWatermark,
          logStartOffset: this.log.logStartOffset,
          logEndOffset: this.log.logEndOffset,
          divergingEpoch: { epoch: end.epoch, endOffset: end.endOffset },
          ...(this.loss ? { leaderLostData: true } : {}),
        };
      }
    }
    if (fetchOffset > this.log.logEndOffset) {
      // The leader's log was truncated below the follower's end (a mirror aligning with its source): the
      // follower must truncate to the leader's end first.
      throw new ClusterError(
        "OFFSET_OUT_OF_RANGE",
        `${this.name}: follower fetch offset ${fetchOffset} is past the leader's log end ${this.log.logEndOffset}`,
      );
    }
    if (fetchOffset < this.log.logStartOffset) {
      // The follower is behind the log start: it must start over from there (OFFSET_OUT_OF_RANGE).
      throw new ClusterError(
        "OFFSET_OUT_OF_RANGE",
        `${this.name}: follower fetch offset ${fetchOffset} is below the log start ${this.log.logStartOffset}`,
      );
    }
    const now = this.clock.now();
    const leaderEnd = this.log.logEndOffset;
    // Kafka's `ReplicaState.updateFetchStateOrThrow`: at the log end, caught up now; at the log end the
    // previous fetch was answered with, caught up as of that fetch (a follower one round trip behind a busy
    // leader never reaches its current end, yet keeps up).
    if (fetchOffset >= leaderEnd) {
      if (now > follower.lastCaughtUpTimeMs) follower.lastCaughtUpTimeMs = now;
    } else if (
      !follower.cutSinceFetch &&
      follower.lastFetchTimeMs >= 0 &&
      fetchOffset >= follower.lastFetchLeaderLogEndOffset &&
      follower.lastFetchTimeMs > follower.lastCaughtUpTimeMs
    ) {
      follower.lastCaughtUpTimeMs = follower.lastFetchTimeMs;
    }
    follower.logEndOffset = fetchOffset;
    follower.cutSinceFetch = false;
    follower.lastFetchTimeMs = now;
    follower.lastFetchLeaderLogEndOffset = leaderEnd;
    follower.parkedAtEnd = fetchOffset >= leaderEnd;
    this.maybeAdvanceHighWatermark();
    const data = this.log.read(fetchOffset, maxBytes, "read_uncommitted", { fetchUpTo: "log_end" });
    return {
      recordSlices: data.recordSlices,
      highWatermark: this.log.highWatermark,
      logStartOffset: data.logStartOffset,
      logEndOffset: data.logEndOffset,
    };
  }

  /**
   * The end of `epoch` as this leader answers a fetcher's `lastFetchedEpoch` (followers, consumers and
   * mirrors: KIP-320), or undefined when there is nothing to check. Kafka's leader holds its current epoch
   * in its cache (recorded on election), so no fetcher can name a later one. A read-only mirror partition
   * records no epoch of its own (its cache is the source's history): named an epoch above its latest (it
   * truncated to align with its source, or it leads without the previous leader's uncommitted tail), it
   * answers as its current epoch would, its latest epoch ending at its log end; with an empty cache (it
   * truncated fully) there is no history to match and the offset checks (OFFSET_OUT_OF_RANGE) decide.
   */
  divergenceCheckFor(epoch: number): { epoch: number; endOffset: bigint } | undefined {
    const latest = this.log.latestEpoch;
    if (epoch === UNDEFINED_EPOCH || latest === undefined) return undefined;
    if (epoch > latest) return { epoch: latest, endOffset: this.log.logEndOffset };
    return this.log.endOffsetForEpoch(epoch);
  }

  /**
   * The ISR the leader should propose: followers caught up to the high watermark join; followers that have
   * not caught up for `replicaLagTimeMaxMs` leave. Undefined when no change is due.
   */
  proposedIsr(config: PartitionConfig): number[] | undefined {
    if (!this.isLeader) return undefined;
    const now = this.clock.now();
    // Every follower fetch asks: answer "no change" without building sets when nothing would change.
    if (!this.isrWouldChange(config, now)) return undefined;
    const isr = new Set(this.meta.isr);
    for (const [id, f] of this.followers) {
      // Only a follower that is fetching now may rejoin: a crashed one keeps its last (caught-up) offsets.
      const fetching = f.lastFetchTimeMs >= 0 && now - f.lastFetchTimeMs <= config.replicaLagTimeMaxMs / 2;
      const caughtUp = this.followerInSync(f);
      if (!isr.has(id) && fetching && caughtUp) {
        isr.add(id);
        f.joinedIsrAtMs = now;
      } else if (isr.has(id) && this.lagging(f, now, config)) isr.delete(id);
    }
    const next = this.meta.replicas.filter((r) => isr.has(r));
    return sameMembers(next, this.meta.isr) ? undefined : next;
  }

  /**
   * Whether an out-of-sync follower may join the ISR (Kafka's `isFollowerInSync`): its log end is at least
   * the high watermark and the start offset of the leader's current epoch (`epochStart`: the leader's log
   * end when it was elected, which covers every record the previous leaders committed, even above this
   * leader's high watermark). A follower one round trip behind a busy leader joins, though it never reaches
   * the leader's current log end. Without an epoch start (not yet recorded), only a follower at the
   * leader's log end joins.
   */
  private followerInSync(f: FollowerState): boolean {
    if (f.cutSinceFetch || f.logEndOffset < this.log.highWatermark) return false;
    const start = this.epochStart?.epoch === this.meta.leaderEpoch ? this.epochStart.offset : undefined;
    return start === undefined ? f.logEndOffset >= this.log.logEndOffset : f.logEndOffset >= start;
  }

  /**
   * Kafka's `effectiveMinIsr`: min.insync.replicas, at most the replication factor (a larger value would
   * refuse every acks=all write and hold the high watermark for good).
   */
  private effectiveMinIsr(minInsyncReplicas: number): number {
    const rf = this.meta.replicas.length;
    return minInsyncReplicas < rf ? minInsyncReplicas : rf;
  }

  /**
   * Whether an in-sync follower leaves the ISR (Kafka's `ReplicaState.isCaughtUp`, negated): a follower at the
   * leader's log end is caught up however long ago it fetched (an idle partition's followers stay in sync);
   * otherwise it must have reached the log end within `replicaLagTimeMaxMs`. A follower that has not fetched
   * since a mirror cut this log is at the log end by the cut alone, so only the time counts for it.
   * A follower that joined less than `replicaLagTimeMaxMs / 2` ago stays: Kafka shrinks an ISR only in its
   * `isr-expiration` task, that often, while fetches only expand it. Ours checks both at every fetch, so a
   * follower that cannot catch up (a full disk) at a high watermark held under min.insync.replicas would
   * rejoin (its end at the high watermark) and leave (caught up too long ago) in a loop at one instant.
   */
  private lagging(f: FollowerState, now: number, config: PartitionConfig): boolean {
    if (!f.cutSinceFetch && f.logEndOffset >= this.log.logEndOffset) return false;
    if (f.joinedIsrAtMs !== undefined && now - f.joinedIsrAtMs < config.replicaLagTimeMaxMs / 2) return false;
    return now - f.lastCaughtUpTimeMs > config.replicaLagTimeMaxMs;
  }

  /**
   * The leader wakes `follower` for new data (or a new high watermark): a fetch it had parked at the log end
   * (`parkedAtEnd`) is answered now, as Kafka's delayed fetch completes when data arrives, so the follower
   * was caught up until this moment. Called only for a follower the leader could reach. A mirror's cut
   * answers it too (the leader wakes its followers after the cut, `cutSinceFetch` already set): the follower
   * was at the log end until the cut, so it has `replicaLagTimeMaxMs` from now to fetch again, not from its
   * last fetch before a quiet (the first follower to fetch after the cut had the others dropped at once).
   */
  answerParkedFetch(follower: number): void {
    const f = this.followers.get(follower);
    if (f === undefined || !f.parkedAtEnd) return;
    f.parkedAtEnd = false;
    f.lastCaughtUpTimeMs = this.clock.now();
  }

  /**
   * The controller fenced `follower`'s broker (it stopped, or missed heartbeats): it is out of every ISR,
   * and what it reported before belongs to an incarnation that is gone (a restart may recover a shorter
   * log). Until it fetches again it counts as never having fetched, so it is not proposed for the ISR
   * (Kafka's `isReplicaIsrEligible`: unfenced, and fetching with its current broker epoch), where the
   * controller would refuse the whole proposal (INELIGIBLE_REPLICA) and keep out a follower that may join.
   */
  forgetFollower(follower: number): void {
    const f = this.followers.get(follower);
    if (f === undefined) return;
    f.logEndOffset = -1n;
    f.lastFetchTimeMs = -1;
    f.lastFetchLeaderLogEndOffset = -1n;
    f.lastCaughtUpTimeMs = this.clock.now();
    f.parkedAtEnd = false;
  }

  /** Whether `proposedIsr` would propose anything: a follower joins or leaves, or the ISR is not a set of replicas. */
  private isrWouldChange(config: PartitionConfig, now: number): boolean {
    const current = this.meta.isr;
    for (let i = 0; i < current.length; i++) {
      const id = current[i] as number;
      if (current.indexOf(id) !== i || !this.meta.replicas.includes(id)) return true;
    }
    for (const [id, f] of this.followers) {
      if (current.includes(id)) {
        if (this.lagging(f, now, config)) return true;
      } else {
        const fetching = f.lastFetchTimeMs >= 0 && now - f.lastFetchTimeMs <= config.replicaLagTimeMaxMs / 2;
        const caughtUp = this.followerInSync(f);
        if (fetching && caughtUp) return true;
      }
    }
    return false;
  }

  /**
   * A mirror truncates this leader's log to `offset` (KIP-1279: aligning with its source). The followers
   * still hold what they fetched before, at the same offsets and epochs as the batches the mirror appends
   * next, until they apply the same cut: each one's end counts as at most `offset` until it fetches again,
   * so the high watermark never covers a batch only this leader holds (its death would lose it).
   */
  truncateAsLeader(offset: bigint): void {
    this.cutAsLeader(offset, false, () => this.log.truncateTo(offset));
  }

  /** As `truncateAsLeader`, emptying the log and restarting it at `offset` (the source's log start). */
  truncateFullyAsLeader(offset: bigint): void {
    this.cutAsLeader(offset, true, () => this.log.truncateFullyAndStartAt(offset));
  }

  private cutAsLeader(offset: bigint, full: boolean, cut: () => void): void {
    this.checkLeader();
    if (!this.cutDrops(offset, full)) {
      cut();
      return;
    }
    // The log cuts whole batches: a batch holding `offset` goes too, so its end may land below `offset`.
    // Marked also when the cut fails part way (a full disk).
    try {
      cut();
    } finally {
      const at = offset < this.log.logEndOffset ? offset : this.log.logEndOffset;
      this.markFollowersCut(at);
      // What the previous leaders committed past the cut is gone: a follower need not hold it to join.
      if (this.epochStart && this.epochStart.offset > at)
        this.epochStart = { ...this.epochStart, offset: at };
    }
  }

  /**
   * Whether a cut to `offset` (`full`: emptying the log there) may drop what a replica holds: the log's
   * batches past `offset`, or (full) any batch, or positions below its end that a restart lower reuses.
   */
  cutDrops(offset: bigint, full: boolean): boolean {
    const log = this.log;
    return offset < log.logEndOffset || (full && log.logEndOffset > log.logStartOffset);
  }

  private markFollowersCut(offset: bigint): void {
    for (const f of this.followers.values()) {
      if (f.logEndOffset > offset) f.logEndOffset = offset;
      f.cutSinceFetch = true;
    }
  }

  /**
   * True when every in-sync follower has fetched since the leader's last cut (so it applied the cut) and
   * reported a log end offset no larger than the leader's.
   */
  followersTruncated(): boolean {
    const leo = this.log.logEndOffset;
    return this.meta.isr.every((id) => {
      if (id === this.brokerId) return true;
      const f = this.followers.get(id);
      return f !== undefined && !f.cutSinceFetch && f.logEndOffset >= 0n && f.logEndOffset <= leo;
    });
  }

  /**
   * HW = the smallest log end offset among the ISR (the leader's own included); it does not move while the
   * ISR is smaller than the effective min.insync.replicas (Kafka's `maybeIncrementLeaderHW`, KAFKA-15583):
   * a record held by fewer replicas is neither acknowledged to acks=all producers nor shown to consumers,
   * and a replica fenced out of an ISR under min.insync.replicas (an eligible leader replica) holds
   * everything below the high watermark.
   */
  maybeAdvanceHighWatermark(): void {
    if (!this.isLeader) return;
    let hw = this.log.logEndOffset;
    for (const id of this.meta.isr) {
      if (id === this.brokerId) continue;
      const f = this.followers.get(id);
      const leo = f?.logEndOffset ?? -1n;
      if (leo < hw) hw = leo;
    }
    if (hw <= this.log.highWatermark) return;
    if (this.meta.isr.length < this.effectiveMinIsr(this.minInsyncReplicas())) {
      highWatermarksHeld++;
      return;
    }
    this.log.updateHighWatermark(hw);
  }
}

/** See `highWatermarksHeldByMinIsr`. */
let highWatermarksHeld = 0;

/**
 * How many times, in this process, a leader did not move its high watermark only because its ISR was
 * smaller than min.insync.replicas (every in-sync replica held more): a process-wide count, as a metric, for
 * tests that measure how often they reach that rule.
 */
export function highWatermarksHeldByMinIsr(): number {
  return highWatermarksHeld;
}

function sameMembers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
