/**
 * The LME PREPARING aligns the log to (spec §4 PREPARING step 2-3), from the source's answer and this
 * partition's own LME (captured when it failed over under this mirror; -1 when none). The later of the two
 * failovers wins, and since every failover bumps the leader epoch above the LME it records and mirroring
 * keeps batch epochs, the later one has the higher LME:
 * - the source knows none (a plain Kafka cluster, or a re-add after this cluster's failover): our own;
 * - the source failed over after our failover (it mirrored our writes, then failed over): the source's;
 * - we mirrored the source after its failover, then failed over ourselves (failback after a failback): our
 *   own. The source's older LME would cut below what we mirrored from it after its failover, removing
 *   committed records (refetched, but gone for a while, and a large topic copied again).
 * -1: truncate fully.
 */
export function alignmentLastMirrorEpoch(sourceLme: number, ownLme: number): number {
  return Math.max(sourceLme, ownLme, -1);
}
