import type { AclBinding } from "./acls";
import type { Uuid } from "./uuid";

/**
 * The controller's metadata log, after KRaft's records: every change to topics, partitions, configs and
 * brokers is one of these, applied in order by the controller and by every broker that subscribes.
 */
export type MetadataRecord =
  | RegisterBrokerRecord
  | FenceBrokerRecord
  | UnfenceBrokerRecord
  | TopicRecord
  | PartitionRecord
  | PartitionChangeRecord
  | ConfigRecord
  | RemoveTopicRecord
  | ProducerIdsRecord
  | MirrorRecord
  | RemoveMirrorRecord
  | MirrorReadOnlyRecord
  | ReplicaTruncationRecord
  | ReplicaTruncationDoneRecord
  | AclRecord
  | RemoveAclRecord;

/** A broker joined the cluster (it starts fenced until `UnfenceBroker`). */
export interface RegisterBrokerRecord {
  type: "RegisterBroker";
  brokerId: number;
  rack: string | null;
}

/** A broker stopped heartbeating (crash or shutdown): it leads nothing and is in no ISR. */
export interface FenceBrokerRecord {
  type: "FenceBroker";
  brokerId: number;
}

/** A broker is alive and may lead partitions. */
export interface UnfenceBrokerRecord {
  type: "UnfenceBroker";
  brokerId: number;
}

/** A topic was created. */
export interface TopicRecord {
  type: "Topic";
  name: string;
  topicId: Uuid;
}

/** A partition was created with its assignment, leader and ISR. */
export interface PartitionRecord {
  type: "Partition";
  topicId: Uuid;
  partition: number;
  replicas: number[];
  isr: number[];
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
}

/**
 * A partition's leader, ISR or epochs changed. A new leader (or a bump) raises `leaderEpoch`; any change
 * raises `partitionEpoch`, as in KRaft.
 */
export interface PartitionChangeRecord {
  type: "PartitionChange";
  topicId: Uuid;
  partition: number;
  leader: number;
  isr: number[];
  leaderEpoch: number;
  partitionEpoch: number;
  /**
   * KIP-966's eligible leader replicas after the change (absent: unchanged): replicas that left the ISR
   * only because they were fenced, so they may hold every committed record.
   */
  elr?: number[];
}

/** A dynamic config was set (`value` a string) or deleted (`value` null) on a topic or a broker. */
export interface ConfigRecord {
  type: "Config";
  resourceType: "topic" | "broker";
  /** Topic name, broker id as a string, or "" for the cluster-wide broker default. */
  resourceName: string;
  name: string;
  value: string | null;
}

/** A topic was deleted. */
export interface RemoveTopicRecord {
  type: "RemoveTopic";
  topicId: Uuid;
}

/** A metadata record with its offset in the metadata log. */
export interface MetadataLogEntry {
  offset: number;
  record: MetadataRecord;
}

/** A block of producer ids was handed out: the next block starts at `nextProducerId` (KRaft's ProducerIdsRecord). */
export interface ProducerIdsRecord {
  type: "ProducerIds";
  nextProducerId: bigint;
}

/**
 * A cluster mirror was created or its definition changed (KIP-1279 keeps mirrors in the cluster metadata, as
 * the CLUSTER_MIRROR config resource). `configs` is the whole definition: source connection and filters.
 */
export interface MirrorRecord {
  type: "Mirror";
  name: string;
  configs: Record<string, string>;
}

/** A cluster mirror was deleted. */
export interface RemoveMirrorRecord {
  type: "RemoveMirror";
  name: string;
}

/**
 * KIP-1279: whether a mirror partition refuses produces (ReadOnlyTopic). The mirror engine sets it when the
 * partition starts mirroring and clears it only at STOPPED; the controller also sets it when a topic's
 * `mirror.name` makes it a mirror again. Kept in the metadata log so that every replica, after a restart or
 * a leader change, knows it without asking the engine.
 */
export interface MirrorReadOnlyRecord {
  type: "MirrorReadOnly";
  topicId: Uuid;
  partition: number;
  readOnly: boolean;
  /**
   * Set by the controller because `mirror.name` made the topic a mirror again (a re-add), not by the engine:
   * the engine's STOPPED step (a coordinator that loaded the STOPPED partition again) leaves it set while
   * `mirror.name` asks for mirroring. The engine's own set (from PREPARING on) takes it over; a removal of
   * the re-add before its START has the partition's coordinator clear it (`clearReadOnlyIfStopped`).
   */
  byMirrorName?: true;
}

/**
 * A mirror truncated a partition's leader log (KIP-1279: aligning with its source). Every other replica may
 * hold records past the cut that the leader no longer has, and the leader soon stores other batches there,
 * possibly of the same epochs (the source's), which KIP-320's epoch check cannot tell apart. So each replica
 * in `replicas` must truncate the same way before it next fetches or leads, including one that is down or
 * outside the ISR now. The leader is listed too (records written before: all but the leader): its own cut
 * follows the record and may fail (a full disk), and it reports once it made it. A replica that still owes an
 * earlier truncation owes the deeper of the two (a full one wins), unless it applied the earlier one.
 */
export interface ReplicaTruncationRecord {
  type: "ReplicaTruncation";
  topicId: Uuid;
  partition: number;
  replicas: number[];
  /** The offset the leader truncated to, or where it restarted its emptied log (`full`). */
  truncationOffset: bigint;
  /** True: the leader emptied its log and restarted it at `truncationOffset`. */
  full: boolean;
  /**
   * The leader's log end before the cut: the batches in `[truncationOffset, previousLogEndOffset)` are
   * gone from the leader, and a mirror downstream of this cluster (a chain) may still hold them (see
   * `PartitionMetadata.logRewrites`). Absent in records written before it was kept: unknown, so as far as
   * any copy reaches.
   */
  previousLogEndOffset?: bigint;
}

/** A replica truncated as a `ReplicaTruncationRecord` required (or another truncation made it moot). */
export interface ReplicaTruncationDoneRecord {
  type: "ReplicaTruncationDone";
  topicId: Uuid;
  partition: number;
  replica: number;
  /** The metadata offset of the truncation record it applied; an older one than the pending one clears nothing. */
  truncationId: number;
}

/**
 * An ACL binding was created (KRaft's AccessControlEntryRecord), so ACLs survive a restart like every other
 * piece of metadata. `owner`: the cluster mirror that created (or adopted) it, so its ACL sync knows, after a
 * restart too, which bindings it may delete when the source drops them; absent for bindings made by users.
 * A record for a binding that exists already just sets its owner; an empty `owner` clears it (the mirror was
 * deleted: the binding is the cluster's own).
 */
export interface AclRecord {
  type: "Acl";
  binding: AclBinding;
  owner?: string;
}

/** An ACL binding was deleted (KRaft's RemoveAccessControlEntryRecord). */
export interface RemoveAclRecord {
  type: "RemoveAcl";
  binding: AclBinding;
}
