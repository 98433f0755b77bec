import type { MetadataRecord } from "./metadata-records";
import { addTruncation, type PendingTruncation, settlesAny, settleTruncations } from "./pending-truncation";
import { storedTopicConfigValue } from "./topic-configs";
import type { Uuid } from "./uuid";

export type { PendingTruncation } from "./pending-truncation";

/** One partition as the metadata log describes it. */
export interface PartitionMetadata {
  partition: number;
  replicas: readonly number[];
  isr: readonly number[];
  /** Broker id of the leader, or -1 when no replica can lead (offline). */
  leader: number;
  leaderEpoch: number;
  partitionEpoch: number;
  /**
   * KIP-966's eligible leader replicas: replicas that left the ISR because they were fenced (a crash or a
   * shutdown), not because they lagged, so they may hold every committed record. One of them leads instead
   * of a last ISR member whose log recovery dropped data. Empty or absent when there are none.
   */
  elr?: readonly number[];
  /**
   * KIP-1279's read-only flag as the mirror engine (or the controller, when `mirror.name` makes the topic a
   * mirror) last set it; undefined when no mirror ever decided (then `mirror.name` alone decides).
   */
  mirrorReadOnly?: boolean;
  /**
   * True while `mirrorReadOnly` was set by a `mirror.name` change (a re-add not yet started), not by the
   * engine (see `MirrorReadOnlyRecord.byMirrorName`).
   */
  mirrorReadOnlyByName?: true;
  /**
   * Truncations a mirror made on the leader that these replicas (by broker id) still owe: each must apply
   * its entry before it next fetches or leads (`ReplicaTruncationRecord`). Absent when none is owed.
   */
  pendingTruncations?: Map<number, PendingTruncation>;
  /**
   * Where a mirror cut this partition's leader log (KIP-1279: a re-add, failback or divergence), oldest
   * first: the batches each cut removed may still be held by a mirror of this partition on another cluster
   * (a chain), which then holds other batches than this log at the same offsets, possibly of the same epochs,
   * so KIP-320's epoch check cannot find them. Such a mirror compares what it holds in each range with this
   * log. At most `MAX_LOG_REWRITES` (the oldest merged). Absent when the log was never cut.
   */
  logRewrites?: readonly LogRewrite[];
}

/** One cut of a leader's log by a mirror (see `PartitionMetadata.logRewrites`). */
export interface LogRewrite {
  /** The metadata offset of the `ReplicaTruncationRecord`: larger for a later cut. */
  id: number;
  /** The first offset whose batches were removed. */
  offset: bigint;
  /** The log end before the cut; undefined when not recorded (as far as any copy reaches). */
  endOffset: bigint | undefined;
}

/**
 * The most log rewrites a partition keeps: beyond it, the two whose ranges lie closest (overlapping ones
 * first) are merged into the range covering both, so the ranges a copy compares grow as little as they can.
 */
export const MAX_LOG_REWRITES = 8;

/** `rewrites` with `next` added (see `MAX_LOG_REWRITES`); in the order they were made, a merge at the later's place. */
export function addLogRewrite(rewrites: readonly LogRewrite[] | undefined, next: LogRewrite): LogRewrite[] {
  const all = [...(rewrites ?? []), next];
  if (all.length <= MAX_LOG_REWRITES) return all;
  let best: [number, number] = [0, 1];
  let bestGap: bigint | undefined;
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const gap = rangeGap(all[i]!, all[j]!);
      if (bestGap === undefined || gap < bestGap) {
        bestGap = gap;
        best = [i, j];
      }
    }
  }
  const [a, b] = [all[best[0]]!, all[best[1]]!];
  const endOffset =
    a.endOffset === undefined || b.endOffset === undefined
      ? undefined
      : a.endOffset > b.endOffset
        ? a.endOffset
        : b.endOffset;
  const merged = { id: b.id, offset: a.offset < b.offset ? a.offset : b.offset, endOffset };
  return all.flatMap((r, k) => (k === best[0] ? [] : k === best[1] ? [merged] : [r]));
}

/** The offsets between two rewritten ranges (0 when they meet or overlap; an unknown end reaches everything). */
function rangeGap(a: LogRewrite, b: LogRewrite): bigint {
  const [low, high] = a.offset <= b.offset ? [a, b] : [b, a];
  if (low.endOffset === undefined || low.endOffset >= high.offset) return 0n;
  return high.offset - low.endOffset;
}

/** One topic as the metadata log describes it. */
export interface TopicMetadata {
  name: string;
  topicId: Uuid;
  partitions: PartitionMetadata[];
  configs: Map<string, string>;
}

/** One broker's registration. */
export interface BrokerMetadata {
  brokerId: number;
  rack: string | null;
  fenced: boolean;
}

/**
 * The cluster's metadata as of some metadata-log offset: what `MetadataImage` is in KRaft. Built only by
 * applying `MetadataRecord`s in order, so the controller and every broker that replays the same log agree.
 */
export class MetadataImage {
  /** Offset of the last record applied (-1 before any). */
  offset = -1;
  readonly topicsById = new Map<Uuid, TopicMetadata>();
  readonly topicIdsByName = new Map<string, Uuid>();
  /** Topic names by their metric name ('.' read as '_'), where Kafka's names collide (see `collidingTopic`). */
  private readonly topicNamesByMetricName = new Map<string, string>();
  readonly brokers = new Map<number, BrokerMetadata>();
  /** Dynamic broker configs by broker id as a string; "" holds cluster-wide defaults. */
  readonly brokerConfigs = new Map<string, Map<string, string>>();
  /** Cluster mirrors by name, with their definitions (source connection and filters). */
  readonly mirrors = new Map<string, Readonly<Record<string, string>>>();
  /** First producer id not yet handed out. */
  nextProducerId = 0n;

  /**
   * An existing topic whose name differs from `name` only where one has '.' and the other '_' (Kafka
   * refuses such a topic: the two would share their metric names), if any.
   */
  collidingTopic(name: string): string | undefined {
    const other = this.topicNamesByMetricName.get(metricName(name));
    return other === name ? undefined : other;
  }

  /** The topic named `name`, if it exists. */
  topic(name: string): TopicMetadata | undefined {
    const id = this.topicIdsByName.get(name);
    return id === undefined ? undefined : this.topicsById.get(id);
  }

  /** One partition of a topic, if both exist. */
  partition(topic: string, partition: number): PartitionMetadata | undefined {
    return this.topic(topic)?.partitions[partition];
  }

  /** Live (unfenced) broker ids, ascending. */
  liveBrokers(): number[] {
    return [...this.brokers.values()]
      .filter((b) => !b.fenced)
      .map((b) => b.brokerId)
      .sort((a, b) => a - b);
  }

  /** A broker's effective dynamic config: its own value, else the cluster default. */
  brokerConfig(brokerId: number, name: string): string | undefined {
    return this.brokerConfigs.get(String(brokerId))?.get(name) ?? this.brokerConfigs.get("")?.get(name);
  }

  /** Applies one record. Records come from the controller, which validated them; applying never fails. */
  apply(record: MetadataRecord, offset: number): void {
    this.offset = offset;
    switch (record.type) {
      case "RegisterBroker":
        this.brokers.set(record.brokerId, { brokerId: record.brokerId, rack: record.rack, fenced: true });
        return;
      case "FenceBroker":
      case "UnfenceBroker": {
        const broker = this.brokers.get(record.brokerId);
        if (broker) broker.fenced = record.type === "FenceBroker";
        return;
      }
      case "Topic":
        this.topicsById.set(record.topicId, {
          name: record.name,
          topicId: record.topicId,
          partitions: [],
          configs: new Map(),
        });
        this.topicIdsByName.set(record.name, record.topicId);
        this.topicNamesByMetricName.set(metricName(record.name), record.name);
        return;
      case "Partition": {
        const topic = this.topicsById.get(record.topicId);
        topic?.partitions.splice(record.partition, 1, {
          partition: record.partition,
          replicas: record.replicas,
          isr: record.isr,
          leader: record.leader,
          leaderEpoch: record.leaderEpoch,
          partitionEpoch: record.partitionEpoch,
        });
        return;
      }
      case "PartitionChange": {
        const p = this.topicsById.get(record.topicId)?.partitions[record.partition];
        if (!p) return;
        p.leader = record.leader;
        p.isr = record.isr;
        p.leaderEpoch = record.leaderEpoch;
        p.partitionEpoch = record.partitionEpoch;
        if (record.elr !== undefined) p.elr = record.elr;
        return;
      }
      case "Config": {
        const configs =
          record.resourceType === "topic"
            ? this.topic(record.resourceName)?.configs
            : getOrCreate(this.brokerConfigs, record.resourceName);
        if (!configs) return;
        if (record.value === null) configs.delete(record.name);
        else if (record.resourceType === "topic")
          configs.set(record.name, storedTopicConfigValue(record.name, record.value));
        else configs.set(record.name, record.value);
        return;
      }
      case "MirrorReadOnly": {
        const p = this.topicsById.get(record.topicId)?.partitions[record.partition];
        if (!p) return;
        p.mirrorReadOnly = record.readOnly;
        if (record.byMirrorName === true) p.mirrorReadOnlyByName = true;
        else delete p.mirrorReadOnlyByName;
        return;
      }
      case "ReplicaTruncation": {
        const p = this.topicsById.get(record.topicId)?.partitions[record.partition];
        if (!p) return;
        const pending = p.pendingTruncations ?? new Map<number, PendingTruncation>();
        const next = { offset: record.truncationOffset, full: record.full, id: offset };
        for (const replica of record.replicas)
          pending.set(replica, addTruncation(pending.get(replica), next));
        if (pending.size > 0) p.pendingTruncations = pending;
        p.logRewrites = addLogRewrite(p.logRewrites, {
          id: offset,
          offset: record.truncationOffset,
          endOffset: record.previousLogEndOffset,
        });
        return;
      }
      case "ReplicaTruncationDone": {
        const p = this.topicsById.get(record.topicId)?.partitions[record.partition];
        const owed = p?.pendingTruncations?.get(record.replica);
        if (!p?.pendingTruncations || !owed || !settlesAny(owed, record.truncationId)) return;
        const rest = settleTruncations(owed, record.truncationId);
        if (rest) p.pendingTruncations.set(record.replica, rest);
        else p.pendingTruncations.delete(record.replica);
        if (p.pendingTruncations.size === 0) p.pendingTruncations = undefined;
        return;
      }
      case "Mirror":
        this.mirrors.set(record.name, { ...record.configs });
        return;
      case "RemoveMirror":
        this.mirrors.delete(record.name);
        return;
      case "ProducerIds":
        this.nextProducerId = record.nextProducerId;
        return;
      case "Acl":
      case "RemoveAcl":
        // The cluster's Authorizer keeps the bindings (it hears these records from the feed).
        return;
      case "RemoveTopic": {
        const topic = this.topicsById.get(record.topicId);
        if (!topic) return;
        this.topicsById.delete(record.topicId);
        this.topicIdsByName.delete(topic.name);
        this.topicNamesByMetricName.delete(metricName(topic.name));
        return;
      }
    }
  }
}

function getOrCreate(map: Map<string, Map<string, string>>, key: string): Map<string, string> {
  let value = map.get(key);
  if (!value) {
    value = new Map();
    map.set(key, value);
  }
  return value;
}

/** A topic's name as Kafka's metrics spell it: '.' replaced by '_' (`Topic.unifyCollisionChars`). */
function metricName(topic: string): string {
  return topic.replaceAll(".", "_");
}
