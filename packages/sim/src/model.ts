/** What the simulation knows it did, used by the invariant checkers (a simplification, not a copy). */

/** How a topic is mirrored on one edge, as the operator last asked. */
export type EdgeTopicState = "ACTIVE" | "PAUSED" | "REMOVED";

/** A topic created on a root cluster. */
export interface TopicModel {
  name: string;
  /** The cluster it was created on. */
  root: string;
  partitions: number;
  compacted: boolean;
}

/** A write the cluster acknowledged: where it landed, and the batch's bytes there. */
export interface AckedWrite {
  node: string;
  topic: string;
  partition: number;
  offset: bigint;
  /** Hex of the batch at `offset` right after the acknowledgement. */
  hex: string;
  /**
   * Acknowledged by the leader alone (acks=1, `rawWrite`): maybe above the high watermark then. Cleared once
   * the leader's high watermark was seen past it (`observeCommittedWrites`).
   */
  leaderOnly?: true;
}

/** A transaction the workload committed (its coordinator answered the commit): it must never read as aborted. */
export interface CommittedTxn {
  node: string;
  topic: string;
  partition: number;
  producerId: bigint;
  /** Offset of the transaction's data batch. */
  offset: bigint;
  /** Virtual time at which `commit()` returned. */
  decidedAt: number;
  /**
   * Set when `node` later re-added the topic as a mirror (a failback may replace its own transactions): see
   * `Simulation.mayBeReplaced` for when that excuses a commit from the checks.
   */
  rejoined?: boolean;
  /** A leader truncation of its partition on `node` since it was decided reached its data or its marker. */
  cut?: true;
}

/** What a completed failover on an edge left behind, per partition. */
export interface FailoverRecord {
  /** Edge mirror name and the new primary. */
  mirror: string;
  node: string;
  topic: string;
  partition: number;
  /** First offset written locally by STOPPING (markers, barrier): below it everything was mirrored. */
  mirroredEnd: bigint;
  /** Offset of the MIRROR_PID_RESET barrier. */
  barrierOffset: bigint;
  /** Destination high watermark when STOPPED was observed. */
  highWatermark: bigint;
  /**
   * The committed state the failover's STOPPING came from, as `__mirror_state` records it (else, when that
   * history is unreadable, the state the operator saw before `--remove`, or UNKNOWN). The operator's view
   * can be stale (a coordinator still loading describes nothing; PREPARING may fail before the removal).
   */
  stoppedFrom: string;
  /**
   * Whether the log was a copy of the source when the failover started (`failoverAlignment`; true when the
   * history is unreadable). A failover of a re-add stopped before its truncation is not: its barrier
   * follows the topic's own writes, which stay local writes.
   */
  aligned: boolean;
  /**
   * Source writes that must survive failover and failback: every write acknowledged before the catch-up
   * barrier of a planned failover, and (any failover) those the destination had below its HW.
   */
  promised: AckedWrite[];
  /** Transactions committed on the source (markers below its HW) before a planned failover's barrier. */
  promisedCommits: CommittedTxn[];
  /** Whether a catch-up barrier was taken (a planned failover). */
  planned: boolean;
  /**
   * The lowest offset a later leader truncation of this partition on `node` cut at: `node` joined a mirror
   * again (a failback or re-add, maybe of another source in a chain) and its log from there on is that
   * source's now, so the offset identity with this failover's source holds only below it.
   */
  rewrittenFrom?: bigint;
  /**
   * The log end when a mirror first appended to this partition on `node` again since (a re-add or failback
   * of this node, whose cut may have been none): from there on its batches are that source's, not the
   * topic's own writes (`checkNoBarrierOverLocalWrites`).
   */
  mirroredAgainFrom?: bigint;
}

/** A destination-side group with an active member and its own commit, which mirroring must not overwrite. */
export interface ActiveGroup {
  node: string;
  groupId: string;
  topic: string;
  partition: number;
  offset: bigint;
}

/** A leader truncation of one partition: where its log was cut, and when. */
export interface Truncation {
  node: string;
  topic: string;
  partition: number;
  /** The new log end (for a full truncation, the new log start). */
  offset: bigint;
  /** Virtual time of the cut. */
  at: number;
}

/**
 * A source topic the workload deleted (and created again under its name): its batches when it was deleted,
 * which are all that a mirror copying it may ever hold (its copies keep its topic id, the new topic has
 * another).
 */
export interface DeletedIncarnation {
  /** The cluster it was deleted on, its name and its topic id. */
  node: string;
  topic: string;
  topicId: string;
  /** Per partition: the source leader's batches (base offset -> hex) when it was deleted. */
  batches: Map<number, Map<bigint, string>>;
  /**
   * Per mirror copying it then (`mirror` name): per partition, the batches its destination's running
   * replicas held at the deletion (base offset -> hex).
   */
  copies: Map<string, Map<number, Map<bigint, string>>>;
}

/**
 * A transaction of the workload open when its node was killed (see `Simulation.restartNode`): its producer
 * died with the connection, so nobody commits it; the coordinator of the new process must abort it once
 * its timeout passed, or its partition's last stable offset stays behind it for good.
 */
export interface AbandonedTxn {
  node: string;
  topic: string;
  partition: number;
  producerId: bigint;
  /** Offset of its data batch. */
  offset: bigint;
  /** Virtual time it began (its timeout counts from about then). */
  beganAt: number;
  /** Virtual time its node was killed. */
  abandonedAt: number;
}

/** The simulation's model of the world. */
export interface SimModel {
  topics: Map<string, TopicModel>;
  /** Per edge mirror name: topic -> requested state. */
  edgeTopics: Map<string, Map<string, EdgeTopicState>>;
  /** `mirror\0topic` -> virtual time the edge topic last became ACTIVE (added; a resume keeps it). */
  activeSince: Map<string, number>;
  /** Every leader truncation on every cluster, in order. */
  truncations: Truncation[];
  acked: AckedWrite[];
  /** Transactions committed by the workload. */
  commits: CommittedTxn[];
  /** Transactions whose producer died in a node restart (never committed by the workload). */
  abandonedTxns: AbandonedTxn[];
  failovers: FailoverRecord[];
  /** `node\0groupId` of every commit the workload made on a source (those groups are synced elsewhere). */
  sourceGroups: Set<string>;
  /**
   * `groupId\0topic:partition` -> the highest offset the workload ever committed for it on any cluster: no
   * cluster's copy of the group may hold more (a sync copies a commit or clamps it down, never invents one).
   */
  groupCommitMax: Map<string, bigint>;
  activeGroups: ActiveGroup[];
  /** `node/topic/partition` of partitions that went through an unclean election (source-side data loss). */
  diverged: Set<string>;
  /** Source topics deleted (and created again under the name), by their topic id. */
  incarnations: Map<string, DeletedIncarnation>;
  /**
   * Topics deleted on a cluster that was still the destination of a mirror of them (a failover not yet
   * STOPPED), by their topic id: the partitions already STOPPED then (they stay so); the others must end
   * FAILED for good, never writing to a topic created again under the name.
   */
  deletedCopies: Map<string, { node: string; topic: string; stopped: Set<number> }>;
  /**
   * `mirror\0topic\0partition` -> the destination leader's log end when the partition was first seen
   * STOPPED after a failover (every local write lies at or above it).
   */
  stoppedEnds: Map<string, bigint>;
}

/** A fresh, empty model. */
export function emptyModel(): SimModel {
  return {
    topics: new Map(),
    edgeTopics: new Map(),
    activeSince: new Map(),
    truncations: [],
    acked: [],
    commits: [],
    abandonedTxns: [],
    failovers: [],
    sourceGroups: new Set(),
    groupCommitMax: new Map(),
    activeGroups: [],
    diverged: new Set(),
    incarnations: new Map(),
    deletedCopies: new Map(),
    stoppedEnds: new Map(),
  };
}

/** `node/topic/partition`. */
export function partitionId(node: string, topic: string, partition: number): string {
  return `${node}/${topic}/${partition}`;
}
