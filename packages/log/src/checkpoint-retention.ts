/**
 * Which producer-state checkpoints a log keeps (taken at segment starts, oldest first). A truncation
 * restores the latest one at or below its cut and replays the batches from there, so the cost of a
 * truncation is the distance from the cut down to the checkpoint below it. Kafka keeps a producer snapshot
 * file per segment; these are in memory, so only a bounded set is kept:
 * - the latest `RECENT_CHECKPOINTS` (one per segment roll): a tail truncation is served from the segment it
 *   cuts into;
 * - up to `OLDER_CHECKPOINTS` older ones spread over the rest of the log: the oldest is always kept, and
 *   when one too many is held, the one dropped is the one whose neighbours lie closest together, so the
 *   gaps stay about even (at most about twice the log's size over `OLDER_CHECKPOINTS`) and a truncation far
 *   back replays a fraction of the log, not all of it;
 * - together at most `MAX_CHECKPOINT_ENTRIES` producer entries: older checkpoints go first.
 */

/** Checkpoints always kept: the latest segment starts. */
export const RECENT_CHECKPOINTS = 8;
/** Checkpoints kept beyond the recent ones, spread over the older part of the log. */
export const OLDER_CHECKPOINTS = 8;
/** Producer entries all kept checkpoints may hold together (about 200 B each: 1.6 MB per partition). */
export const MAX_CHECKPOINT_ENTRIES = 8_000;

/** What the retention looks at: where a checkpoint was taken, and how many producer entries it holds. */
export interface RetainedCheckpoint {
  readonly offset: bigint;
  readonly entries: number;
}

/**
 * Appends `next` (taken above every checkpoint in `list`) and drops older checkpoints while more are kept
 * than the rules above allow. Mutates `list`.
 */
export function retainCheckpoint<T extends RetainedCheckpoint>(list: T[], next: T): void {
  list.push(next);
  let entries = 0;
  for (const c of list) entries += c.entries;
  while (list.length > RECENT_CHECKPOINTS) {
    const older = list.length - RECENT_CHECKPOINTS;
    if (older <= OLDER_CHECKPOINTS && entries <= MAX_CHECKPOINT_ENTRIES) break;
    const i = older === 1 ? 0 : closestNeighbours(list, older);
    entries -= list[i]!.entries;
    list.splice(i, 1);
  }
}

/**
 * Of the older checkpoints after the oldest (indexes 1 to `older - 1`), the one whose neighbours lie closest
 * together: dropping it widens the gaps least. Ties go to the earliest.
 */
function closestNeighbours(list: readonly RetainedCheckpoint[], older: number): number {
  let best = 1;
  let bestGap: bigint | undefined;
  for (let i = 1; i < older; i++) {
    const gap = list[i + 1]!.offset - list[i - 1]!.offset;
    if (bestGap === undefined || gap < bestGap) {
      best = i;
      bestGap = gap;
    }
  }
  return best;
}

/**
 * The segment starts a replay of the whole log checkpoints at: the ones `retainCheckpoint` keeps when the
 * segments are rolled in order, counting no entries (the replay then adds each through `retainCheckpoint`,
 * which applies the entry budget).
 */
export function checkpointOffsets(segmentBases: readonly bigint[]): Set<bigint> {
  const kept: RetainedCheckpoint[] = [];
  for (const offset of segmentBases) retainCheckpoint(kept, { offset, entries: 0 });
  return new Set(kept.map((c) => c.offset));
}
