/** One cut of a leader's log by a mirror that a replica must copy (a `ReplicaTruncationRecord`). */
export interface ReplicaCut {
  /** The offset to truncate to, or to restart the emptied log at (`full`). */
  offset: bigint;
  full: boolean;
  /** The metadata offset of the record: larger for a later cut. */
  id: number;
}

/**
 * The cuts a replica still owes (see `PartitionMetadata.pendingTruncations`). `offset` and `full` combine
 * them all, as a replica that applied none (down the whole time) cuts; `id` is the newest one's, which the
 * replica reports once it applied them.
 */
export interface PendingTruncation extends ReplicaCut {
  /**
   * Each cut not reported yet, oldest first. A replica that applied some of them (before it restarted, or
   * while the controller could not hear its report) owes only the later ones: combining those it applied
   * too would cut again what it fetched since, which may be committed and held by no other replica.
   */
  cuts: readonly ReplicaCut[];
}

/**
 * The most cuts kept per replica, as long as two adjacent ones can merge without loss: beyond it the oldest
 * pair whose later cut covers the earlier one (a full truncation, or a cut at most as deep as a partial one)
 * merges into the later. Merging any other pair would make a replica that applied exactly the older one
 * (its report lost) cut deeper than it owes, dropping what it fetched since: committed, maybe held by no
 * other replica. Such cuts (each shallower than the one before) are all kept.
 */
export const MAX_PENDING_CUTS = 16;

/** True when a replica that applied `a` owes, for `a` then `b`, just what it owes for `b`. */
function covers(a: ReplicaCut, b: ReplicaCut): boolean {
  return b.full || (!a.full && b.offset <= a.offset);
}

/**
 * The cut `b` made after `a`, as one: a full truncation wins (the replica's whole log is stale; a later
 * partial cut of the log started afresh changes nothing), else the deeper cut (what it holds past either is
 * stale).
 */
function combine(a: ReplicaCut, b: ReplicaCut): ReplicaCut {
  if (b.full) return b;
  if (a.full) return { ...a, id: b.id };
  return { offset: a.offset < b.offset ? a.offset : b.offset, full: false, id: b.id };
}

function pending(cuts: readonly ReplicaCut[]): PendingTruncation | undefined {
  const all = cuts.reduce<ReplicaCut | undefined>((acc, c) => (acc ? combine(acc, c) : c), undefined);
  return all && { ...all, cuts };
}

/** What a replica owes once `next` is recorded on top of `owed`. */
export function addTruncation(owed: PendingTruncation | undefined, next: ReplicaCut): PendingTruncation {
  const cuts = [...(owed?.cuts ?? []), next];
  if (cuts.length > MAX_PENDING_CUTS) {
    const i = cuts.findIndex((c, j) => j + 1 < cuts.length && covers(c, cuts[j + 1]!));
    if (i >= 0) cuts.splice(i, 2, combine(cuts[i]!, cuts[i + 1]!));
  }
  return pending(cuts)!;
}

/** What the replica still owes once it reported every cut up to `reportedId`; undefined when nothing. */
export function settleTruncations(
  owed: PendingTruncation,
  reportedId: number,
): PendingTruncation | undefined {
  return pending(owed.cuts.filter((c) => c.id > reportedId));
}

/** True when a report of `reportedId` settles at least one cut of `owed`. */
export function settlesAny(owed: PendingTruncation | undefined, reportedId: number): boolean {
  return owed?.cuts.some((c) => c.id <= reportedId) ?? false;
}

/** The cut a replica that applied every cut up to `appliedId` still owes, combined; undefined when none. */
export function cutsAfter(owed: PendingTruncation, appliedId: number): ReplicaCut | undefined {
  return pending(owed.cuts.filter((c) => c.id > appliedId));
}
