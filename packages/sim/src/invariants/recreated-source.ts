import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { DeletedIncarnation } from "../model";
import { hexOf, leaderLog } from "./logs";
import type { Violation } from "./violation";

/**
 * The deleted source topic that `destination`'s copy of `topic` belongs to, when `source` no longer has it:
 * the copy keeps the deleted topic's id, and the source's topic of that name is gone or has another id
 * (deleted and created again). Undefined when the copy is of the source's current topic.
 */
export function orphanedIncarnation(
  source: KafkaCluster,
  destination: KafkaCluster,
  topic: string,
  incarnations: ReadonlyMap<string, DeletedIncarnation>,
): DeletedIncarnation | undefined {
  const copyId = destination.controller.image.topic(topic)?.topicId;
  if (copyId === undefined || source.controller.image.topic(topic)?.topicId === copyId) return undefined;
  return incarnations.get(copyId);
}

/** Where a check of one orphaned copy stops looking (see `checkOrphanedCopy`). */
export interface OrphanedCopyBounds {
  /** Batches at or above it are local writes (the partition was seen STOPPED there). */
  localFrom?: bigint;
  /** The topic was failed over: control batches (STOPPING's ABORT markers and barrier) are its own. */
  failedOver: boolean;
}

/**
 * A copy whose source topic was deleted (maybe created again under its name) gets nothing but the deleted
 * topic's own batches: below its local writes, every batch of the copy's leader is, byte for byte, the
 * deleted topic's batch at that offset or one the copy already held at the deletion. A batch of the new
 * topic of that name appended after the old topic's, or any other, is a mix of two topics.
 */
export function checkOrphanedCopy(
  label: string,
  destination: KafkaCluster,
  incarnation: DeletedIncarnation,
  mirror: string,
  partition: number,
  bounds: OrphanedCopyBounds,
): Violation[] {
  const copy = incarnation.copies.get(mirror);
  const log = leaderLog(destination, incarnation.topic, partition);
  if (!copy || !log) return [];
  const held = copy.get(partition);
  if (held === undefined) {
    // Only the source topic of the copy's id could give it partitions, and it is gone; a failed-over copy
    // is an ordinary topic, which its operator may grow.
    if (bounds.failedOver) return [];
    return [
      {
        invariant: "recreated-source",
        message: `${label} ${incarnation.topic}-${partition}: the copy got this partition after its source topic (id ${incarnation.topicId}, which had ${copy.size} partition(s)) was deleted`,
      },
    ];
  }
  const source = incarnation.batches.get(partition) ?? new Map<bigint, string>();
  const out: Violation[] = [];
  for (const b of log.batches()) {
    if (bounds.localFrom !== undefined && b.lastOffset >= bounds.localFrom) continue;
    if (bounds.failedOver && b.isControl) continue;
    const hex = hexOf(b);
    if (source.get(b.baseOffset) === hex || held.get(b.baseOffset) === hex) continue;
    out.push({
      invariant: "recreated-source",
      message: `${label} ${incarnation.topic}-${partition}: the batch at offset ${b.baseOffset} (epoch ${b.partitionLeaderEpoch}, pid ${b.producerId}) is not the deleted source topic's (id ${incarnation.topicId}: ${source.has(b.baseOffset) ? "it had another batch there" : "it had no batch there"}) and the copy did not hold it when that topic was deleted (log now ${log.logStartOffset}..${log.logEndOffset})`,
    });
    if (out.length >= 3) break;
  }
  return out;
}
