import type { KafkaCluster } from "@cluster-mirror/cluster";

/** A batch header as `GET /v1/log` shows it. */
export interface BatchView {
  baseOffset: bigint;
  lastOffset: bigint;
  partitionLeaderEpoch: number;
  producerId: bigint;
  producerEpoch: number;
  isTransactional: boolean;
  isControl: boolean;
  /** ABORT 0, COMMIT 1, MIRROR_PID_RESET 7; null for data batches. */
  controlType: number | null;
  recordCount: number;
  crc: number;
  sizeInBytes: number;
}

/** A partition's offsets and batches on its leader. */
export interface PartitionLogView {
  topic: string;
  partition: number;
  leader: number;
  logStartOffset: bigint;
  logEndOffset: bigint;
  highWatermark: bigint;
  lastStableOffset: bigint;
  batches: BatchView[];
}

/** Reads a partition's log on its leader (UNKNOWN_TOPIC_OR_PARTITION / LEADER_NOT_AVAILABLE otherwise). */
export function partitionLog(cluster: KafkaCluster, topic: string, partition: number): PartitionLogView {
  const leader = cluster.leaderFor(topic, partition);
  const log = leader.replica(topic, partition)!.log;
  return {
    topic,
    partition,
    leader: leader.brokerId,
    logStartOffset: log.logStartOffset,
    logEndOffset: log.logEndOffset,
    highWatermark: log.highWatermark,
    lastStableOffset: log.lastStableOffset,
    batches: [...log.batches()].map((b) => ({
      baseOffset: b.baseOffset,
      lastOffset: b.lastOffset,
      partitionLeaderEpoch: b.partitionLeaderEpoch,
      producerId: b.producerId,
      producerEpoch: b.producerEpoch,
      isTransactional: b.isTransactional,
      isControl: b.isControl,
      controlType: b.isControl ? b.controlType : null,
      recordCount: b.recordCount,
      crc: b.crc,
      sizeInBytes: b.sizeInBytes,
    })),
  };
}
