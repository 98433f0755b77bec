import { describePartitionLog, type KafkaCluster } from "@cluster-mirror/cluster";
import type { StateHistoryPage, StateHistoryRecord } from "@cluster-mirror/mirror";
import { MIRROR_STATE_TOPIC } from "@cluster-mirror/mirror";
import { decodeMirrorStateRecord, decodeRecordBatch } from "@cluster-mirror/protocol";

/**
 * The history read from scratch (the node serves it through `MirrorStateHistoryCache`, which reads only
 * what is new and must answer the same): every committed record still in `__mirror_state` (all its partitions, read on their leaders through
 * `describePartitionLog`, below each one's high watermark as a Kafka consumer reads), decoded, merged in
 * time order (timestamp, then partition, then offset) and numbered by `position`. A record that does not
 * decode is listed with `error` instead of being dropped. A record above the high watermark is not history
 * yet: its followers may never get it (a leader change truncates it), and the live stream has not shown it.
 */
export function readMirrorStateHistory(cluster: KafkaCluster): {
  records: StateHistoryRecord[];
  partitions: StateHistoryPage["partitions"];
} {
  const image = cluster.controller.image;
  const topic = image.topic(MIRROR_STATE_TOPIC);
  const records: Omit<StateHistoryRecord, "position">[] = [];
  const partitions: StateHistoryPage["partitions"][number][] = [];
  for (let p = 0; p < (topic?.partitions.length ?? 0); p++) {
    let log: ReturnType<typeof describePartitionLog>;
    try {
      log = describePartitionLog(cluster, MIRROR_STATE_TOPIC, p, {
        maxBatches: Number.POSITIVE_INFINITY,
        includeBytes: true,
      });
    } catch {
      continue; // no running leader: the partition is listed once it has one again
    }
    partitions.push({
      partition: p,
      logStartOffset: Number(log.logStartOffset),
      logEndOffset: Number(log.logEndOffset),
    });
    for (const b of log.batches) {
      if (b.isControl || !b.bytes) continue;
      const batch = decodeRecordBatch(b.bytes);
      for (const r of batch.records) {
        const offset = Number(batch.baseOffset) + r.offsetDelta;
        if (offset < Number(log.logStartOffset) || offset >= Number(log.highWatermark) || r.key === null)
          continue;
        const timestamp = Number(batch.baseTimestamp + r.timestampDelta);
        records.push(decodeHistoryRecord(image, p, offset, timestamp, r.key, r.value));
      }
    }
  }
  records.sort(historyOrder);
  return { records: records.map((r, position) => ({ position, ...r })), partitions };
}

/** A history record before it is numbered: what the node keeps of each `__mirror_state` record. */
export type UnnumberedHistoryRecord = Omit<StateHistoryRecord, "position">;

/** What orders a record in the history. */
export type HistoryKey = Pick<StateHistoryRecord, "timestamp" | "partition" | "offset">;

/** The history's order: timestamp, then partition, then offset. */
export function historyOrder(a: HistoryKey, b: HistoryKey): number {
  return a.timestamp - b.timestamp || a.partition - b.partition || a.offset - b.offset;
}

/** One `__mirror_state` record decoded; one that does not decode carries `error` instead. */
export function decodeHistoryRecord(
  image: KafkaCluster["controller"]["image"],
  partition: number,
  offset: number,
  timestamp: number,
  key: Buffer,
  value: Buffer | null,
): UnnumberedHistoryRecord {
  try {
    const d = decodeMirrorStateRecord(key, value);
    return {
      partition,
      offset,
      timestamp,
      key: {
        kind: d.key.kind,
        mirror: d.key.mirrorName,
        topicId: d.key.topicId,
        topic: image.topicsById.get(d.key.topicId)?.name ?? null,
        partition: d.key.partition,
      },
      value: d.value as StateHistoryRecord["value"],
    };
  } catch (error) {
    return {
      partition,
      offset,
      timestamp,
      key: null,
      value: null,
      error: error instanceof Error ? error.message : String(error),
    };
  }
}
