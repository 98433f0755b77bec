import { ClusterError, type KafkaCluster, type Uuid } from "@cluster-mirror/cluster";
import { alignmentLastMirrorEpoch } from "@cluster-mirror/machines";
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

/** A partition's log end when `localWritesAtRisk` last read it (see `writtenSince`). */
export interface CheckedLogEnd {
  topic: string;
  partition: number;
  logEndOffset: bigint;
}

/** What a partition's log must answer for the check. */
interface CheckedLog {
  logEndOffset: bigint;
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint };
  batches(): Iterable<RecordBatch>;
}

/**
 * The records written locally after the failover of `topic` that mirroring it again from a source that
 * answers `lastMirrorEpoch` would truncate. Local means written here since the log last held mirrored data:
 * after the last MIRROR_PID_RESET (only failover writes one), or, when `ownLastMirrorEpoch` gives the LME
 * this cluster captured at that failover, in a leader epoch above it, whichever starts earlier. The second
 * rule matters after a re-add stopped before its truncation: that failover keeps the earlier LME, and
 * logs written before it left the topic's own producer state alone hold a second PID reset after the
 * writes it kept (soak FC_SEED=4).
 * PREPARING's rule, applied without changing anything: the LME is the later failover's, the source's or
 * this cluster's own (`alignmentLastMirrorEpoch`); LME -1, or an epoch this log never had, truncates fully; otherwise the log is cut at the end offset of epoch LME. Then the fetch's divergence check (KIP-320)
 * cuts where the source's own epoch LME ends, when that is earlier (`sourceEndOffsetForEpoch`): the source
 * mirrored only part of this log's last epoch before it failed over (an unplanned failover). Partitions
 * never failed over here (no PID reset, no LME of their own: an old primary failing back, whose divergent
 * tail the failback drops by design) or with nothing local beyond the cut are left out. A failover from
 * FAILED over a log without mirrored data writes no PID reset: its own LME (often -1) alone tells the local
 * writes. LEADER_NOT_AVAILABLE (retriable) when a partition has no running leader to read.
 * Each partition failed over here is added to `checked` with its log end as counted: the check awaits the
 * source, so records written meanwhile are counted by `writtenSince`.
 */
export async function localWritesAtRisk(
  cluster: KafkaCluster,
  topic: { name: string; topicId: Uuid; partitionCount: number },
  lastMirrorEpoch: (topicId: Uuid, partition: number) => Promise<number>,
  sourceEndOffsetForEpoch?: (
    partition: number,
    leaderEpoch: number,
  ) => Promise<{ leaderEpoch: number; endOffset: bigint }>,
  ownLastMirrorEpoch?: (partition: number) => number | undefined,
  checked: CheckedLogEnd[] = [],
): Promise<LocalWritesAtRisk[]> {
  const out: LocalWritesAtRisk[] = [];
  for (let p = 0; p < topic.partitionCount; p++) {
    const log = leaderLogOf(cluster, topic.name, p);
    const floor = localWritesStart(log, ownLastMirrorEpoch?.(p));
    if (floor === undefined) continue;
    if (floor >= log.logEndOffset) {
      checked.push({ topic: topic.name, partition: p, logEndOffset: log.logEndOffset });
      continue;
    }
    const lme = alignmentLastMirrorEpoch(
      await lastMirrorEpoch(topic.topicId, p),
      ownLastMirrorEpoch?.(p) ?? -1,
    );
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
    const from = cut > floor ? cut : floor;
    const records = dataRecordsFrom(log, from);
    // Read after the awaits, with `records`: a write landing later is one `writtenSince` counts.
    checked.push({ topic: topic.name, partition: p, logEndOffset: log.logEndOffset });
    if (records > 0n) out.push({ topic: topic.name, partition: p, fromOffset: from, records });
  }
  return out;
}

/**
 * Where the records written here since the log last held mirrored data start (see `localWritesAtRisk`), or
 * undefined when the log has no PID reset and no LME of this cluster's own (never failed over here).
 */
function localWritesStart(log: CheckedLog, ownLastMirrorEpoch: number | undefined): bigint | undefined {
  let lastReset: bigint | undefined;
  let firstAboveLme: bigint | undefined; // the first data batch written in an epoch above the LME
  for (const b of log.batches()) {
    if (b.isControl && controlTypeOf(b) === ControlRecordType.MIRROR_PID_RESET) lastReset = b.baseOffset;
    if (
      firstAboveLme === undefined &&
      ownLastMirrorEpoch !== undefined &&
      !b.isControl &&
      b.partitionLeaderEpoch > ownLastMirrorEpoch
    ) {
      firstAboveLme = b.baseOffset;
    }
  }
  // No PID reset: a failover from FAILED over a log that held no mirrored data writes none (it records
  // its LME and bumps the epoch only), so what was written since is told by its epoch alone.
  if (lastReset === undefined) return firstAboveLme;
  const afterReset = lastReset + 1n;
  return firstAboveLme !== undefined && firstAboveLme < afterReset ? firstAboveLme : afterReset;
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

/**
 * The records written to the partitions `localWritesAtRisk` checked since it read them (`checked`): it
 * awaited the source meanwhile, so an application still writing there could add records it never counted,
 * which the add would then truncate unasked. Called with nothing awaited between it and the `mirror.name`
 * change that makes the topics read-only, so nothing can land after it either.
 */
export function writtenSince(cluster: KafkaCluster, checked: readonly CheckedLogEnd[]): LocalWritesAtRisk[] {
  const out: LocalWritesAtRisk[] = [];
  for (const c of checked) {
    const log = leaderLogOf(cluster, c.topic, c.partition);
    if (log.logEndOffset <= c.logEndOffset) continue;
    const records = dataRecordsFrom(log, c.logEndOffset);
    if (records > 0n)
      out.push({ topic: c.topic, partition: c.partition, fromOffset: c.logEndOffset, records });
  }
  return out;
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
