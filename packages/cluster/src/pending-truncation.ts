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
 * The most cuts kept per replica: beyond it the two oldest merge into one (with the later's id), so a
 * replica that applied exactly the older of those two before its report was lost cuts deeper than it needs
 * to. It takes more cuts than that while one replica's reports go unheard.
 */
export const MAX_PENDING_CUTS = 16;

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
  if (cuts.length > MAX_PENDING_CUTS) cuts.splice(0, 2, combine(cuts[0]!, cuts[1]!));
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
