import { ClusterError, INTERNAL_PRINCIPAL, type KafkaCluster } from "@cluster-mirror/cluster";
import { decodeRecords, encodeRecordBatch } from "@cluster-mirror/protocol";
import type { StateLog, StateLogRecord } from "../ports";

/** The compacted internal topic that holds the mirror partitions' states (spec §6). */
export const MIRROR_STATE_TOPIC = "__mirror_state";

/** Kafka's default for `mirror.topic.num.partitions` (as `offsets.topic.num.partitions`). */
export const DEFAULT_MIRROR_STATE_PARTITIONS = 50;

/** The largest `__mirror_state` a start creates (`ClusterMirroring.start`'s `numStatePartitions`). */
export const MAX_MIRROR_STATE_PARTITIONS = 1000;

/**
 * `delete.retention.ms` of `__mirror_state`: Kafka's Long.MAX_VALUE, so the cleaner never drops a tombstone.
 * A replica that was away while a mirror was deleted (or a LastMirrorEpochs value cleared) fetches from its
 * own log end: a tombstone dropped meanwhile never reaches it, and the records it shadowed, still in that
 * replica's log, would come back the day it leads. The partition keeps one record per key either way.
 */
export const MIRROR_STATE_DELETE_RETENTION_MS = "9223372036854775807";

/**
 * Creates `__mirror_state` (compacted, tombstones kept, `numPartitions` partitions, replication factor
 * min(3, live brokers)) unless it exists; returns its partition count. One created by an earlier version,
 * whose cleaner drops tombstones, gets `delete.retention.ms` set (while the controller is unavailable that
 * waits for the next start).
 */
export function ensureMirrorStateTopic(cluster: KafkaCluster, numPartitions: number): number {
  const existing = cluster.controller.image.topic(MIRROR_STATE_TOPIC);
  if (existing) {
    if (existing.configs.get("delete.retention.ms") !== MIRROR_STATE_DELETE_RETENTION_MS) {
      try {
        cluster.controller.incrementalAlterConfigs({ type: "topic", name: MIRROR_STATE_TOPIC }, [
          { name: "delete.retention.ms", op: "SET", value: MIRROR_STATE_DELETE_RETENTION_MS },
        ]);
      } catch (error) {
        if (!(error instanceof ClusterError)) throw error;
      }
    }
    return existing.partitions.length;
  }
  const live = cluster.controller.image.liveBrokers().length;
  cluster.controller.createTopic({
    name: MIRROR_STATE_TOPIC,
    numPartitions,
    replicationFactor: Math.max(1, Math.min(3, live)),
    configs: { "cleanup.policy": "compact", "delete.retention.ms": MIRROR_STATE_DELETE_RETENTION_MS },
  });
  return numPartitions;
}

/** A `StateLog` that can say, without writing, whether it still leads at an epoch (zombie fencing). */
export interface LeaderEpochCheck {
  /** True when this log's broker leads the partition at exactly `leaderEpoch`. */
  isLeaderAt(leaderEpoch: number): boolean;
}

/**
 * `StateLog` over one `__mirror_state` partition as broker `brokerId` holds it. `append` writes one batch
 * with acks=-1 (resolves once the ISR has it) and is refused unless this broker leads the partition at
 * exactly `leaderEpoch`, checked synchronously right before the produce, so a coordinator that lost
 * leadership cannot write.
 */
export class EmbeddedStateLog implements StateLog, LeaderEpochCheck {
  constructor(
    private readonly cluster: KafkaCluster,
    readonly brokerId: number,
    readonly partition: number,
  ) {}

  isLeaderAt(leaderEpoch: number): boolean {
    const p = this.cluster.localBroker(this.brokerId)?.replica(MIRROR_STATE_TOPIC, this.partition);
    return p?.isLeader === true && p.leaderEpoch === leaderEpoch;
  }

  async append(records: { key: Buffer; value: Buffer | null }[], leaderEpoch: number): Promise<void> {
    const broker = this.cluster.localBroker(this.brokerId);
    const p = broker?.isRunning ? broker.replica(MIRROR_STATE_TOPIC, this.partition) : undefined;
    const name = `${MIRROR_STATE_TOPIC}-${this.partition}`;
    if (!broker || !p?.isLeader) {
      throw new ClusterError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${this.brokerId} does not lead ${name}; its coordinator must stop writing (the new leader's coordinator owns it)`,
      );
    }
    if (p.leaderEpoch !== leaderEpoch) {
      throw new ClusterError(
        "FENCED_LEADER_EPOCH",
        `${name} is at leader epoch ${p.leaderEpoch}, the coordinator wrote with ${leaderEpoch}; it must reload the partition`,
      );
    }
    if (records.length === 0) return;
    const batch = encodeRecordBatch({
      baseTimestamp: BigInt(this.cluster.clock.now()),
      records: records.map((r, i) => ({
        attributes: 0,
        offsetDelta: i,
        timestampDelta: 0n,
        key: r.key,
        value: r.value,
        headers: [],
      })),
    });
    // An internal write, as Kafka's coordinators append without ACL checks: allowed with the authorizer on.
    await broker.produce({
      topic: MIRROR_STATE_TOPIC,
      partition: this.partition,
      batch,
      acks: -1,
      principal: INTERNAL_PRINCIPAL,
    });
  }

  hasUncommittedTail(): boolean {
    const log = this.cluster.localBroker(this.brokerId)?.replica(MIRROR_STATE_TOPIC, this.partition)?.log;
    return log !== undefined && log.highWatermark < log.logEndOffset;
  }

  readAll(): StateLogRecord[] {
    const p = this.cluster.localBroker(this.brokerId)?.replica(MIRROR_STATE_TOPIC, this.partition);
    if (!p) {
      throw new ClusterError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${this.brokerId} hosts no ${MIRROR_STATE_TOPIC}-${this.partition}; load it on its leader`,
      );
    }
    const start = p.log.logStartOffset;
    const out: StateLogRecord[] = [];
    for (const batch of p.log.batches()) {
      if (batch.isControl || batch.lastOffset < start) continue;
      for (const r of decodeRecords(batch)) {
        const offset = batch.baseOffset + BigInt(r.offsetDelta);
        if (offset >= start && r.key !== null) out.push({ offset, key: r.key, value: r.value });
      }
    }
    return out;
  }
}
