import type { AclBinding, Uuid } from "@cluster-mirror/cluster";
import type { KafkaError } from "@cluster-mirror/protocol";

/**
 * The ports of the mirroring engine (design.md "Ports"). The engine talks to these interfaces only; the
 * embedded adapters implement them over `KafkaCluster`, and a kafkajs adapter implements `SourceCluster` for a
 * real Apache Kafka source. Everything is asynchronous because a source is usually across a network.
 */

/** One partition of a source topic as the source's metadata describes it. */
export interface SourcePartitionInfo {
  partition: number;
  /** Broker id of the source leader, or -1 when the partition has none right now. */
  leaderId: number;
  leaderEpoch: number;
}

/** What `SourceCluster.describeTopics` describes beyond the topics' metadata. */
export interface DescribeTopicsOptions {
  /** The topics whose dynamic configs are wanted (all when absent). */
  configsOf?: (topic: string) => boolean;
}

/** One source partition's leader, as a Metadata request for its topic answers it. */
export interface SourcePartitionLeader extends SourcePartitionInfo {
  topic: string;
}

/** One source topic: id, partitions and dynamic configs. */
export interface SourceTopicInfo {
  name: string;
  topicId: Uuid;
  partitions: SourcePartitionInfo[];
  /**
   * Dynamic (non-default) topic configs; undefined when they are unknown: not asked for (`configsOf`), or
   * the source refused to describe them (no DescribeConfigs permission). Never an empty set for unknown:
   * the config sync would take it for "every config deleted on the source" and delete them here.
   */
  configs?: Record<string, string>;
}

/** One partition of a mirror fetch: consumer-style, with the epoch of the last fetched batch (KIP-320). */
export interface SourceFetchPartition {
  topic: string;
  partition: number;
  fetchOffset: bigint;
  /** Epoch of the last batch the destination has for this partition, -1 when it has none. */
  lastFetchedEpoch: number;
  /** The source leader epoch the fetcher last saw, -1 to skip the check. */
  currentLeaderEpoch: number;
  maxBytes: number;
  /**
   * The id of the source topic being copied (a mirror topic keeps its source's id). A source whose topic
   * of this name now has another id (deleted and created again) answers UNKNOWN_TOPIC_ID with no records,
   * as Kafka's Fetch v13+ does, so a new topic's records never land in the copy of the old one. Omitted:
   * fetched by name alone.
   */
  topicId?: Uuid;
}

/** The answer for one partition of a mirror fetch. */
export interface SourceFetchPartitionResult {
  topic: string;
  partition: number;
  /** Set when this partition failed (NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE, FENCED_LEADER_EPOCH...). */
  error?: KafkaError;
  /**
   * Whole raw batches, exactly as the source stores them, as slices: concatenated they are the
   * partition's records; each slice starts at a batch boundary and only the last may end with a partial
   * batch (a fetch cut at its byte limit). An embedded source hands over views of its stored bytes
   * (as Kafka sends a file range without copying it); a network source has one slice per response.
   */
  recordSlices: readonly Buffer[];
  /**
   * True when `recordSlices` are views of memory the source keeps using (an embedded source in
   * `copyOnFetch` mode): the receiver stores a copy, made once, as a socket read makes one. Unset: the
   * bytes are the receiver's to keep as they are (a network response, or the zero-copy in-process path).
   */
  sharedBytes?: boolean;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  /** Set when the destination's last fetched epoch ends earlier on the source: truncate to `endOffset`. */
  divergingEpoch?: { epoch: number; endOffset: bigint };
  /**
   * Where the source's own mirror cut this partition's log (the source is itself a mirror: a re-add,
   * failback or divergence upstream of it), oldest first, each with an id that grows with every cut. The
   * batches a cut removed may still be in the destination, at offsets where the source now holds others,
   * possibly of the same epochs (KIP-320 cannot tell): the destination compares what it holds in each range
   * it has not checked yet with the source's log (`LogRewriteCheck`). Absent from a plain Apache Kafka
   * source, whose leader only truncates at a leader change, which starts a new epoch.
   */
  logRewrites?: readonly SourceLogRewrite[];
}

/** One cut of the source's log by its own mirror (see `SourceFetchPartitionResult.logRewrites`). */
export interface SourceLogRewrite {
  /** Grows with every cut of the source's partitions (the metadata offset that recorded it). */
  id: number;
  /** The first offset whose batches were removed. */
  offset: bigint;
  /** The source's log end before the cut; undefined when unknown (as far as the destination reaches). */
  endOffset: bigint | undefined;
}

/** A fetch sent to one source broker (replica id -1, READ_UNCOMMITTED). */
export interface SourceFetchRequest {
  /** Deterministic client id (spec §8): mirror name, destination broker id, fetcher index. */
  clientId: string;
  /** The source broker the partitions' leaders are on. */
  brokerId: number;
  /** Response size limit over all partitions. */
  maxBytes: number;
  partitions: SourceFetchPartition[];
  /**
   * A one-off fetch outside any fetch session (KIP-227's sessionless fetch: session id 0, epoch -1): the
   * source opens none for it, so none is left holding a slot of its session cache afterwards. For a probe;
   * a fetcher leaves it unset, as its incremental sessions save bytes on every round.
   */
  sessionless?: boolean;
}

/** A source consumer group's committed offsets and whether it has active members. */
export interface SourceGroupOffsets {
  groupId: string;
  offsets: { topic: string; partition: number; offset: bigint; leaderEpoch: number; metadata: string }[];
}

/** How `SourceCluster.listGroupOffsets` treats a source broker, or a group, it could not ask. */
export interface ListGroupOffsetsOptions {
  /**
   * Called with each error of a broker whose groups could not be listed, or of a group whose offsets its
   * coordinator did not give; the listing goes on without them. Absent: the first such error rejects it.
   */
  onError?: (error: Error) => void;
}

/** A cluster mirror as the source lists it (for mirror-loop detection). */
export interface SourceMirrorInfo {
  name: string;
  /** The cluster id of the cluster that source mirrors from. */
  sourceClusterId: string;
  topics: string[];
  /**
   * Per topic, the clusters that cluster's copy comes from in turn, nearest first (a chain); absent when
   * not known (a source that did not answer, or one that does not tell). See `listMirrorsWithUpstream`.
   */
  upstream?: Readonly<Record<string, readonly string[]>>;
}

/** Options of `SourceCluster.listMirrors`. */
export interface ListMirrorsOptions {
  /**
   * The clusters the question came through, the first asker first: a cluster that finds itself here was
   * asked round a loop and answers without asking its own sources.
   */
  readonly askedBy?: readonly string[];
}

/** The source cluster: an unmodified Kafka cluster that only serves ordinary consumer fetches and admin calls. */
export interface SourceCluster {
  /** The source's cluster id (pinned at mirror creation; a change fails the mirror's partitions). */
  clusterId(): Promise<string>;
  /**
   * Every topic (internal ones excluded) with ids, partitions, leaders and epochs, and the dynamic configs
   * of the topics `configsOf` accepts (all when absent); the others come with `{}`. A real cluster then
   * describes the configs of those alone: a mirror of 10 topics on a source of 10,000 asks for 10.
   */
  describeTopics(options?: DescribeTopicsOptions): Promise<SourceTopicInfo[]>;
  /**
   * The leader and leader epoch of every partition of these topics (a Metadata request for them alone, no
   * configs): what a fetcher needs to route, at the cost of the topics it mirrors rather than of the whole
   * source. A topic the source does not have is left out.
   */
  partitionLeaders(topics: readonly string[]): Promise<SourcePartitionLeader[]>;
  /** A consumer-style fetch to one source broker; per-partition errors are in the results, never thrown. */
  fetch(
    request: SourceFetchRequest,
  ): Promise<{ throttleTimeMs: number; partitions: SourceFetchPartitionResult[] }>;
  /**
   * ListOffsets: -2 earliest (log start), -1 latest (high watermark). With `topicId`, the answer is of the
   * topic with that id: a source whose topic of this name has another id (deleted and created again) or
   * none rejects with UNKNOWN_TOPIC_ID (Kafka's ListOffsets names topics only; a source checks the id
   * after asking, which proves the answer was of that topic since ids are never reused).
   */
  listOffsets(topic: string, partition: number, timestamp: bigint, topicId?: Uuid): Promise<bigint>;
  /**
   * OffsetsForLeaderEpoch (KIP-101/320): where `leaderEpoch` ends on the source's leader (the start of the
   * next higher epoch, or its log end), with the largest epoch at most `leaderEpoch` it knows (-1: none).
   * `topicId` as for `listOffsets`.
   */
  endOffsetForEpoch(
    topic: string,
    partition: number,
    leaderEpoch: number,
    topicId?: Uuid,
  ): Promise<{ leaderEpoch: number; endOffset: bigint }>;
  /**
   * Consumer groups with committed offsets, and whether each has active members. A source of several
   * brokers asks each for the groups it coordinates: without `onError` one that fails fails the whole
   * listing (Kafka's `ListConsumerGroupsResult.all()`); with it, each failure goes to `onError` and the
   * groups of the brokers that answered are returned (`valid()` and `errors()`, as MirrorMaker 2 lists).
   */
  listGroupOffsets(options?: ListGroupOffsetsOptions): Promise<(SourceGroupOffsets & { active: boolean })[]>;
  /**
   * ACL bindings; undefined when the source runs no authorizer (SECURITY_DISABLED): its ACLs are unknown,
   * and the sync changes nothing (an empty list would delete every binding the mirror created).
   */
  describeAcls(): Promise<AclBinding[] | undefined>;
  /**
   * The LME the source recorded for this partition when it was failed over (it was a mirror itself), or -1
   * when it does not know (never failed over, or a plain Apache Kafka cluster without KIP-1279).
   */
  lastMirrorEpoch(topicId: Uuid, partition: number): Promise<number>;
  /**
   * The mirrors the source itself runs (empty for a plain Apache Kafka cluster), each with its topics'
   * upstream clusters when the source knows them.
   */
  listMirrors(options?: ListMirrorsOptions): Promise<SourceMirrorInfo[]>;
  /**
   * False when a failback onto this source is impossible: a plain Apache Kafka cluster cannot mirror back
   * from us (it has no KIP-1279). Absent: it can (our own clusters).
   */
  canFailBack?(): boolean;
  /** Closes its connections (a source reached over the network); nothing is asked of it afterwards. */
  close?(): Promise<void>;
}

/** Opens a source from a mirror's definition (`bootstrap.servers` and the rest of its configs). */
export interface SourceConnector {
  connect(
    mirrorName: string,
    configs: Readonly<Record<string, string>>,
    options?: SourceConnectOptions,
  ): SourceCluster;
}

/** How a source connection is opened. */
export interface SourceConnectOptions {
  /**
   * A short-lived connection that tries a config before it is stored (an alter's new password or
   * address): what goes wrong on it is the caller's error to report, never a warning logged as the
   * mirror's.
   */
  quiet?: boolean;
}

/** Identifies one mirror partition: the mirror, and the topic (same name and id as on the source). */
export interface MirrorPartitionKey {
  mirror: string;
  topic: string;
  topicId: Uuid;
  partition: number;
}

/** The destination leader replica of one mirror partition, as the engine on its broker sees it. */
export interface LocalReplica {
  readonly topic: string;
  readonly partition: number;
  logStartOffset(): bigint;
  logEndOffset(): bigint;
  highWatermark(): bigint;
  /** The partition's current leader epoch on the destination. */
  leaderEpoch(): number;
  /**
   * The epoch of the log's last offset (`PartitionLog.lastWrittenEpoch`): the last mirrored epoch (a fetch's
   * `lastFetchedEpoch`, a failover's LME). Not the leader-epoch cache's latest, which may end with an epoch a
   * leader recorded at the log end while the topic was writable and never wrote in (a replica that led then
   * and leads again before its first fetch would name it). -1 when the cache is empty.
   */
  latestEpoch(): number;
  /** KIP-101/279 end offset of `epoch` in the local log. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint };
  /**
   * The stored bytes from the batch holding `offset` on, up to the log end, whole batches of at most
   * `maxBytes` in all (at least one): each slice starts at a batch boundary. Empty at the log end.
   */
  read(offset: bigint, maxBytes: number): readonly Buffer[];
  /**
   * Appends fetched batches unchanged (validated first); returns the batches appended and the last offset.
   * `transferOwnership`: the caller never writes to `batches` again (a fetch response), so the log may
   * keep the bytes without copying them.
   */
  appendAsIs(
    batches: Buffer | readonly Buffer[],
    options?: { transferOwnership?: boolean },
  ): { batchCount: number; lastOffset: bigint | undefined };
  truncateTo(offset: bigint): void;
  truncateFullyAndStartAt(offset: bigint): void;
  /**
   * The source's log start moved up (DeleteRecords, retention): raises this log's start to it, at most to
   * the high watermark and never down (Kafka's follower rule); returns the log start offset.
   */
  followSourceLogStart(offset: bigint): bigint;
  /** True once every in-sync follower has truncated to at most the leader's end. */
  followersTruncated(): boolean;
  /** Open transactions in the producer state (to abort at failover). */
  ongoingTransactions(): { producerId: bigint; producerEpoch: number; firstOffset: bigint }[];
  /** Appends a control batch (ABORT marker, MIRROR_PID_RESET) as leader, allowed while read-only. */
  appendControlBatch(batch: Buffer): void;
  /**
   * True if the log's last batch is a MIRROR_PID_RESET written at a leader epoch above `epoch`: a resumed
   * STOPPING (which writes above the LME) finds its own barrier and writes no second one, while a barrier
   * mirrored from the source (its own failover's, at or below the LME) is not taken for it.
   */
  endsWithPidResetAbove(epoch: number): boolean;
  /**
   * True if the log holds a data batch written at a leader epoch above `epoch` (the failover's LME): local
   * producers wrote to the topic after that failover made it writable (its own writes there are control
   * batches only).
   */
  hasDataBatchAbove(epoch: number): boolean;
  /**
   * Resolves once every in-sync replica has the log up to `offset` (the high watermark passed it), as an
   * acks=all write; rejects when this broker stops leading first or the wait times out.
   */
  awaitReplicated(offset: bigint): Promise<void>;
  /**
   * Sets (from PREPARING on) or clears (at STOPPED) the partition's read-only flag durably, in the
   * destination's cluster metadata, so every replica refuses produces until it is cleared.
   */
  setReadOnly(readOnly: boolean): void;
}

/** What the engine needs of the destination cluster beyond one replica. */
export interface DestinationCluster {
  readonly clusterId: string;
  /** The local leader replica of a partition on `brokerId`, or undefined when that broker does not lead it. */
  replica(brokerId: number, topic: string, partition: number): LocalReplica | undefined;
  /** The broker that leads a partition now, or -1. */
  leaderOf(topic: string, partition: number): number;
  /** The partition's leader epoch in the cluster's metadata now, or -1 when it has no leader. */
  leaderEpochOf(topic: string, partition: number): number;
  /**
   * The id of the topic called `topic` now, or undefined when there is none. A mirror partition names its
   * topic by name and id: a name that now has another id is another topic (the mirror topic was deleted
   * and one created under its name), which the partition's steps must never write to. Optional: without
   * it the coordinator cannot tell, and trusts the name.
   */
  topicIdOf?(topic: string): Uuid | undefined;
  /** A dynamic topic config's value, or undefined when unset (or no such topic). Optional. */
  topicConfig?(topic: string, name: string): string | undefined;
  /**
   * Sets or clears a mirror partition's read-only flag in the cluster's metadata, which needs no partition
   * leader (setting the value it has writes nothing). Optional: without it the flag is set through the
   * partition's leader (`LocalReplica.setReadOnly`).
   */
  setMirrorReadOnly?(topic: string, partition: number, readOnly: boolean): void;
  /**
   * Whether the partition's read-only flag the engine set (PREPARING's `markReadOnly`) is still set in the
   * cluster's metadata: not cleared since (STOPPED's step), and not one a `mirror.name` change set (a
   * re-add's, which local writes may precede). While it holds, nothing but the engine wrote to the
   * partition since it was set. Optional: without it a coordinator that did not write a failover's barrier
   * itself does not check it.
   */
  mirrorReadOnlyHeld?(topic: string, partition: number): boolean;
  /**
   * The producers whose transaction this cluster's transaction coordinators will still end on the partition
   * (KIP-664's ListTransactions and DescribeTransactions: ongoing or preparing with the partition, or
   * ended with a last end that named it), or undefined while a coordinator's state is not known (not
   * loaded, not reachable): then nothing may be read as hanging. A transaction open on the partition's log whose
   * producer id is not listed here at its epoch or a later one is hanging: nothing will ever end it. Optional:
   * without it the coordinator cannot tell, and aborts no transaction of a log it takes for the topic's own.
   */
  liveTransactions?(
    topic: string,
    partition: number,
  ): { producerId: bigint; producerEpoch: number }[] | undefined;
  /**
   * Moves every consumer group's committed offset past the partition leader's log end back to it: after
   * PREPARING's truncation (the source's records take the cut ones' offsets) and before STOPPED makes the
   * partition writable (local writes take them), so no group resumes past records it never read.
   * Optional: without it committed offsets are left as they are.
   */
  clampGroupOffsets?(topic: string, partition: number): void;
  /** Creates a mirror topic with the source's id and partition count (read-only from birth: mirror.name set). */
  createMirrorTopic(request: {
    name: string;
    topicId: Uuid;
    numPartitions: number;
    replicationFactor?: number;
    configs: Record<string, string>;
  }): void;
  createPartitions(topic: string, totalCount: number): void;
  /** Incremental alter of topic configs (SET / DELETE). */
  alterTopicConfigs(topic: string, ops: { name: string; op: "SET" | "DELETE"; value?: string }[]): void;
  /**
   * Whether the cluster has an active controller now (false while a KRaft quorum elects one: every request
   * to it is refused with NOT_CONTROLLER). Optional: without it a FAILED that waits for the controller
   * retries when its backoff ends, or on `onControllerActive`.
   */
  controllerActive?(): boolean;
  /**
   * Calls `listener` each time the cluster has an active controller again after it had none. Returns the
   * function that unsubscribes. Optional: without it a FAILED that waits for the controller (a step refused
   * with NOT_CONTROLLER for the whole time a client waits) retries when its backoff ends.
   */
  onControllerActive?(listener: () => void): () => void;
  /** KIP-1279 BumpLeaderEpochs: returns the new leader epochs (all or nothing: one failure throws). */
  bumpLeaderEpochs(requests: { topic: string; partition: number; minLeaderEpoch: number }[]): number[];
  /**
   * KIP-1279 BumpLeaderEpochs for many partitions in one request (one metadata record batch): each result,
   * in request order, is the partition's new leader epoch or the error that partition alone got. Optional:
   * without it the coordinator sends one `bumpLeaderEpochs` per partition.
   */
  bumpLeaderEpochsBatch?(
    requests: readonly { topic: string; partition: number; minLeaderEpoch: number }[],
  ): ({ leaderEpoch: number; error?: undefined } | { leaderEpoch?: undefined; error: Error })[];
}

/** One record of `__mirror_state` as the log holds it: a key, and a value or null (tombstone). */
export interface StateLogRecord {
  offset: bigint;
  key: Buffer;
  value: Buffer | null;
}

/**
 * One `__mirror_state` partition as its coordinator sees it. `append` is refused (FENCED_LEADER_EPOCH or
 * NOT_LEADER_OR_FOLLOWER) when `leaderEpoch` is not the partition's current one on this broker, so a
 * coordinator that lost leadership cannot write; it resolves once the records are durable (acks=all).
 */
export interface StateLog {
  readonly partition: number;
  append(records: { key: Buffer; value: Buffer | null }[], leaderEpoch: number): Promise<void>;
  /** Every record from the log start, in offset order (the compacted log). */
  readAll(): StateLogRecord[];
  /**
   * Whether the log holds records above its high watermark: an earlier leader's writes that not every
   * in-sync replica has yet, which an election of such a replica would truncate. A coordinator loads only
   * once there are none (they are committed then: this leader never truncates its own log), so it never
   * acts on a state that the next leader does not have. Optional: a log that cannot tell is read as it is.
   */
  hasUncommittedTail?(): boolean;
}

/** The fetcher side, as the coordinator's effect executor drives it (spec §3 "Mirror fetcher"). */
export interface FetcherManager {
  /**
   * Starts fetching a partition from the local log end offset. `leaderMoved`: this broker became the
   * partition's leader while it mirrors, not a lifecycle change of the partition (see `afterProgress`).
   */
  addPartition(key: MirrorPartitionKey, options?: { leaderMoved?: boolean }): void;
  /**
   * Stops fetching a partition; resolves once no fetch in flight includes it (nothing more will be
   * appended). The LME is then read on the partition's leader, wherever leadership has moved meanwhile.
   */
  removePartition(key: MirrorPartitionKey): Promise<void>;
  /** EPOCH_FENCING: stop appending this partition's batches until `releaseAppends`. */
  holdAppends(key: MirrorPartitionKey): void;
  releaseAppends(key: MirrorPartitionKey): void;
  /** Source high watermark and destination log end offset as last seen, for lag (spec §4). */
  offsets(
    key: MirrorPartitionKey,
  ): { sourceHighWatermark: bigint; destinationLogEndOffset: bigint } | undefined;
  /** Stops every fetcher. */
  close(): void;
}

/** What the fetchers report back to the partition actors (through their coordinator's mailbox). */
export interface FetcherEvents {
  /** A fetched batch's leader epoch, with the local leader epoch (drives EPOCH_FENCING and proactive bumps). */
  epochObserved(key: MirrorPartitionKey, batchEpoch: number, localLeaderEpoch: number): void;
  /**
   * A partition-level failure the fetcher cannot handle itself (corrupt batch, unknown error...).
   * `afterProgress`: this assignment appended batches before it failed (see `MirrorPartitionFailure`).
   */
  partitionFailed(
    key: MirrorPartitionKey,
    message: string,
    retryable: boolean,
    afterProgress?: boolean,
  ): void;
}

/** A mirror partition's committed state, as `describe`, metrics and the visualizer read it. */
export interface MirrorPartitionView {
  key: MirrorPartitionKey;
  state: string;
  stateEpoch: number;
  leaderEpoch: number;
  lastMirrorEpoch: number;
  errorMessage: string | null;
  retryAttempt: number;
  previousState: string | null;
}

/** The coordinators as the metadata manager and the admin API use them. */
export interface MirrorCoordinators {
  /**
   * Sends an operator or metadata command to the partition's actor through its coordinator; resolves once
   * the command was accepted (its record appended), rejects with InvalidMirrorStateError when the state does
   * not allow it.
   */
  command(
    key: MirrorPartitionKey,
    command:
      | { type: "START" | "PAUSE" | "RESUME" | "STOP" }
      | { type: "FAIL"; message: string; retryable: boolean }
      | { type: "RECOVER"; pauseRequested?: boolean },
  ): Promise<void>;
  /** Committed states of every partition of a mirror (all mirrors when omitted). */
  describe(mirror?: string): MirrorPartitionView[];
  /** Writes tombstones for every partition of a deleted mirror. */
  tombstoneMirror(mirror: string): Promise<void>;
  /**
   * Makes a partition of a removed topic writable when it is STOPPED with no change waiting, or has no state
   * at all (see `CoordinatorShard.clearReadOnlyIfStopped`); nothing when its coordinator is not loaded here.
   * Optional. True when a change waits there for its append (the caller sends STOP to follow it).
   */
  clearReadOnlyIfStopped?(key: MirrorPartitionKey): boolean;
  /**
   * What a failover of the partition starting now would decide from its actor's context (see
   * {@link FailoverPlan}); undefined when its actor is not running here. Optional: `previewFailover` then
   * guesses from the committed state.
   */
  failoverPlan?(key: MirrorPartitionKey): FailoverPlan | undefined;
}

/**
 * The parts of a partition actor's context STOPPING decides by (spec §4 STOPPING steps 2 and 3), for
 * `--failover-preview`: the committed state alone cannot tell them (a FAILED partition, or a PREPARING one
 * whose truncation completed, may or may not hold a copy of the source).
 */
export interface FailoverPlan {
  /** The log is a copy of the source and no LME was captured yet: the failover records the log's latest epoch. */
  aligned: boolean;
  /** The LME the failover records when not `aligned` (an earlier failover's, or -1). */
  lastMirrorEpoch: number;
  /** The log holds mirrored data: the failover aborts every open transaction, not only the hanging ones. */
  holdsMirroredData: boolean;
  /**
   * The local leader epoch as the actor last learned it (from its fetcher or its own bumps; a leader
   * election while no fetcher runs, e.g. PAUSED, is not seen): the failover's bump minimum is 10 above it
   * or the LME.
   */
  localLeaderEpoch: number;
}
