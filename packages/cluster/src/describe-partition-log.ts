import { ControlRecordType, type RecordBatch } from "@cluster-mirror/protocol";
import { ClusterError } from "./errors";
import type { KafkaCluster } from "./kafka-cluster";

/** One stored record batch's v2 header, as the leader holds it (what `kafka-dump-log` prints per batch). */
export interface RawBatchInfo {
  baseOffset: bigint;
  lastOffset: bigint;
  /** The epoch of the leader that appended it (kept as-is by followers and mirrors). */
  partitionLeaderEpoch: number;
  /** -1 for a batch of a non-idempotent producer. */
  producerId: bigint;
  producerEpoch: number;
  /** Sequence of the first record; -1 without idempotence. */
  baseSequence: number;
  /** Sequence of the last record (wrapping at 2^31); -1 without idempotence. */
  lastSequence: number;
  isTransactional: boolean;
  isControl: boolean;
  /** Control batches: ABORT 0, COMMIT 1, MIRROR_PID_RESET 7; null for data batches. */
  controlType: number | null;
  /** Control batches: `ABORT`, `COMMIT`, `MIRROR_PID_RESET` (or `UNKNOWN(n)`); null for data batches. */
  controlTypeName: string | null;
  /** `CreateTime`, or `LogAppendTime` when the leader stamped its clock (maxTimestamp is then that time). */
  timestampType: "CreateTime" | "LogAppendTime";
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  /** Compression codec: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd. */
  compression: number;
  /** The stored CRC-32C (unsigned), and whether it matches the bytes. */
  crc: number;
  crcValid: boolean;
  recordCount: number;
  sizeInBytes: number;
  /** The batch's bytes (a copy), only when asked with `includeBytes`. */
  bytes?: Buffer;
}

/** What {@link describePartitionLog} reads. */
export interface DescribePartitionLogOptions {
  /** Batches whose last offset is below this are skipped (default: the log start offset). */
  fromOffset?: bigint;
  /** At most this many batches (default 100; `Infinity` for all, 0 for the offsets alone). */
  maxBatches?: number;
  /** Also return each batch's bytes (`RawBatchInfo.bytes`, a copy), e.g. to compare logs byte for byte. */
  includeBytes?: boolean;
}

/** A partition's offsets and raw batches, read on its leader. */
export interface PartitionLogDescription {
  topic: string;
  partition: number;
  /** The broker whose log was read. */
  leader: number;
  logStartOffset: bigint;
  logEndOffset: bigint;
  highWatermark: bigint;
  lastStableOffset: bigint;
  batches: RawBatchInfo[];
  /** True when `maxBatches` cut the listing short (read on from the last batch's `lastOffset + 1`). */
  truncated: boolean;
}

/** One producer id's state in a partition (Kafka's DescribeProducers, KIP-664). */
export interface ProducerStateInfo {
  producerId: bigint;
  producerEpoch: number;
  /** Sequence of the producer's last appended record; -1 when none is remembered. */
  lastSequence: number;
  /** maxTimestamp of its last batch. */
  lastTimestamp: bigint;
  /** First offset of its open transaction; null when none is open. */
  currentTxnStartOffset: bigint | null;
}

const CONTROL_NAMES = new Map<number, string>(Object.entries(ControlRecordType).map(([k, v]) => [v, k]));

/** The header fields of one batch (no record is decoded). */
export function rawBatchInfo(batch: RecordBatch): RawBatchInfo {
  const controlType = batch.isControl ? batch.controlType : null;
  return {
    baseOffset: batch.baseOffset,
    lastOffset: batch.lastOffset,
    partitionLeaderEpoch: batch.partitionLeaderEpoch,
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    baseSequence: batch.baseSequence,
    lastSequence: batch.lastSequence,
    isTransactional: batch.isTransactional,
    isControl: batch.isControl,
    controlType,
    controlTypeName:
      controlType === null ? null : (CONTROL_NAMES.get(controlType) ?? `UNKNOWN(${controlType})`),
    timestampType: batch.timestampType === 1 ? "LogAppendTime" : "CreateTime",
    baseTimestamp: batch.baseTimestamp,
    maxTimestamp: batch.maxTimestamp,
    compression: batch.compression,
    crc: batch.crc,
    crcValid: batch.isValid(),
    recordCount: batch.recordCount,
    sizeInBytes: batch.sizeInBytes,
  };
}

/**
 * Reads a partition's record batches raw on its leader: each batch's header (offsets, producer id, epoch
 * and sequences, transactional and control flags, partition leader epoch, timestamps, CRC, record count)
 * plus the log's start, end, high watermark and LSO. A reading aid for operators and tests (Kafka's
 * `kafka-dump-log --print-data-log` without the records), not the fetch path: it reads the log from its
 * first segment. Throws UNKNOWN_TOPIC_OR_PARTITION or LEADER_NOT_AVAILABLE (retriable), and
 * INVALID_REQUEST for a negative `maxBatches`.
 */
export function describePartitionLog(
  cluster: KafkaCluster,
  topic: string,
  partition: number,
  options: DescribePartitionLogOptions = {},
): PartitionLogDescription {
  const maxBatches = options.maxBatches ?? 100;
  if (!(Number.isInteger(maxBatches) || maxBatches === Number.POSITIVE_INFINITY) || maxBatches < 0) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `maxBatches must be a non-negative integer or Infinity, got ${maxBatches}; pass how many batches to list`,
    );
  }
  const { broker, log } = leaderLogOf(cluster, topic, partition);
  const from = options.fromOffset ?? log.logStartOffset;
  const batches: RawBatchInfo[] = [];
  let truncated = false;
  for (const batch of log.batches()) {
    if (batch.lastOffset < from) continue;
    if (batches.length >= maxBatches) {
      truncated = true;
      break;
    }
    const info = rawBatchInfo(batch);
    if (options.includeBytes) info.bytes = Buffer.from(batch.buffer);
    batches.push(info);
  }
  return {
    topic,
    partition,
    leader: broker.brokerId,
    logStartOffset: log.logStartOffset,
    logEndOffset: log.logEndOffset,
    highWatermark: log.highWatermark,
    lastStableOffset: log.lastStableOffset,
    batches,
    truncated,
  };
}

/**
 * A partition's producer state on its leader (Kafka's DescribeProducers): per producer id its epoch, last
 * sequence, last timestamp and open transaction's first offset, by ascending producer id. What decides
 * whether a retry is a duplicate, a sequence is out of order, or a transaction holds the LSO back.
 * Throws UNKNOWN_TOPIC_OR_PARTITION or LEADER_NOT_AVAILABLE (retriable).
 */
export function describeProducers(
  cluster: KafkaCluster,
  topic: string,
  partition: number,
): ProducerStateInfo[] {
  const { log } = leaderLogOf(cluster, topic, partition);
  return log.producerStateSnapshot().map((e) => ({
    producerId: e.producerId,
    producerEpoch: e.producerEpoch,
    lastSequence: e.batchMetadata.at(-1)?.lastSeq ?? -1,
    lastTimestamp: e.lastTimestamp,
    currentTxnStartOffset: e.currentTxnFirstOffset ?? null,
  }));
}

function leaderLogOf(cluster: KafkaCluster, topic: string, partition: number) {
  const broker = cluster.leaderFor(topic, partition);
  const replica = broker.replica(topic, partition);
  if (!replica) {
    throw new ClusterError(
      "LEADER_NOT_AVAILABLE",
      `${topic}-${partition}: broker ${broker.brokerId} is its leader but holds no replica yet; retry after the election`,
    );
  }
  return { broker, log: replica.log };
}
