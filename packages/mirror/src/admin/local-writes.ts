import { ClusterError, type KafkaCluster, type Uuid } from "@cluster-mirror/cluster";
import { ControlRecordType, controlTypeOf, type RecordBatch } from "@cluster-mirror/protocol";

/** Records written on this cluster after a failover that a (re-)add would truncate, for one partition. */
export interface LocalWritesAtRisk {
  topic: string;
  partition: number;
  /** The first offset that would go. */
  fromOffset: bigint;
  /** Data records (control records not counted) from `fromOffset` to the log end. */
  records: bigint;
}

/** What a partition's log must answer for the check. */
interface CheckedLog {
  logEndOffset: bigint;
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint };
  batches(): Iterable<RecordBatch>;
}

/**
 * The records written locally after the failover of `topic` (those after its last MIRROR_PID_RESET, which
 * only failover writes) that mirroring it again from a source that answers `lastMirrorEpoch` would truncate.
 * PREPARING's rule, applied without changing anything: LME -1, or an epoch this log never had, truncates
 * fully; otherwise the log is cut at the end offset of epoch LME. Then the fetch's divergence check (KIP-320)
 * cuts where the source's own epoch LME ends, when that is earlier (`sourceEndOffsetForEpoch`): the source
 * mirrored only part of this log's last epoch before it failed over (an unplanned failover). Partitions with
 * no PID reset (never failed over here) or nothing local beyond the cut are left out. LEADER_NOT_AVAILABLE
 * (retriable) when a partition has no running leader to read.
 */
export async function localWritesAtRisk(
  cluster: KafkaCluster,
  topic: { name: string; topicId: Uuid; partitionCount: number },
  lastMirrorEpoch: (topicId: Uuid, partition: number) => Promise<number>,
  sourceEndOffsetForEpoch?: (
    partition: number,
    leaderEpoch: number,
  ) => Promise<{ leaderEpoch: number; endOffset: bigint }>,
): Promise<LocalWritesAtRisk[]> {
  const out: LocalWritesAtRisk[] = [];
  for (let p = 0; p < topic.partitionCount; p++) {
    const log = leaderLogOf(cluster, topic.name, p);
    const reset = lastPidResetOffset(log);
    if (reset === undefined || reset + 1n >= log.logEndOffset) continue;
    const lme = await lastMirrorEpoch(topic.topicId, p);
    let end = lme < 0 ? -1n : log.endOffsetForEpoch(lme).endOffset;
    if (end >= 0n && sourceEndOffsetForEpoch) {
      // The first fetch's divergence check: the follower cuts at min(the leader's end of the epoch it
      // knows, this log's end of that epoch).
      const theirs = await sourceEndOffsetForEpoch(p, lme);
      if (theirs.leaderEpoch < 0 || theirs.endOffset < 0n) end = -1n;
      else {
        const ours = log.endOffsetForEpoch(theirs.leaderEpoch).endOffset;
        const diverged = theirs.endOffset < ours ? theirs.endOffset : ours;
        if (diverged < end) end = diverged;
      }
    }
    const cut = end < 0n ? -1n : end; // -1: truncated fully
    const from = cut > reset ? cut : reset + 1n;
    const records = dataRecordsFrom(log, from);
    if (records > 0n) out.push({ topic: topic.name, partition: p, fromOffset: from, records });
  }
  return out;
}

function leaderLogOf(cluster: KafkaCluster, topic: string, partition: number): CheckedLog {
  const meta = cluster.controller.image.partition(topic, partition);
  const log =
    meta && meta.leader >= 0 ? cluster.broker(meta.leader)?.replica(topic, partition)?.log : undefined;
  if (!log) {
    throw new ClusterError(
      "LEADER_NOT_AVAILABLE",
      `${topic}-${partition} has no running leader, so the records written there since its failover cannot be counted; nothing was changed. Retry once it has a leader.`,
    );
  }
  return log;
}

/** Base offset of the log's last MIRROR_PID_RESET batch, or undefined when it has none. */
function lastPidResetOffset(log: CheckedLog): bigint | undefined {
  let last: bigint | undefined;
  for (const b of log.batches()) {
    if (b.isControl && controlTypeOf(b) === ControlRecordType.MIRROR_PID_RESET) last = b.baseOffset;
  }
  return last;
}

/** Data records at offsets >= `from` (offsets of a batch counted within its range). */
function dataRecordsFrom(log: CheckedLog, from: bigint): bigint {
  let n = 0n;
  for (const b of log.batches()) {
    if (b.isControl || b.lastOffset < from || b.baseOffset >= log.logEndOffset) continue;
    if (b.baseOffset >= from) n += BigInt(b.recordCount);
    else n += b.lastOffset - from + 1n;
  }
  return n;
}
