import { type EpochEndOffset, UNDEFINED_EPOCH_OFFSET } from "./leader-epoch-cache";

/** What the truncation rule reads of the local log (a `PartitionLog`, or a mirror's leader replica). */
export interface DivergenceLocalView {
  logEndOffset: bigint;
  highWatermark: bigint;
  endOffsetForEpoch(epoch: number): EpochEndOffset;
}

/**
 * Where a replica truncates when the leader it fetches from (a partition leader, or a mirror's source)
 * answers a fetch with a diverging epoch or OffsetsForLeaderEpoch with `leader`: Kafka's follower
 * (AbstractFetcherThread.getOffsetTruncationState, KIP-101/279/320).
 * - UNDEFINED end offset (-1, -1: the leader's cache is empty or the epoch is unknown to it): the
 *   high watermark, never lower. What is committed here stays; nothing can be matched, so nothing else goes.
 * - The local log has no epoch <= the leader's: the leader's end offset.
 * - The largest local epoch <= the leader's is another epoch: its local end offset (an intermediate step;
 *   the next fetch names that epoch and the leader answers again).
 * - The same epoch: the smaller of both end offsets.
 * Never above the local log end. The caller truncates even when this is the log end, so an epoch entry
 * that no local batch reached is dropped (`PartitionLog.truncateTo`).
 */
export function divergenceTruncationOffset(local: DivergenceLocalView, leader: EpochEndOffset): bigint {
  const leo = local.logEndOffset;
  let target: bigint;
  if (leader.endOffset === UNDEFINED_EPOCH_OFFSET) {
    target = local.highWatermark;
  } else {
    const mine = local.endOffsetForEpoch(leader.epoch);
    if (mine.endOffset === UNDEFINED_EPOCH_OFFSET) target = leader.endOffset;
    else if (mine.epoch !== leader.epoch) target = mine.endOffset;
    else target = mine.endOffset < leader.endOffset ? mine.endOffset : leader.endOffset;
  }
  return target < leo ? target : leo;
}
