import type { StateHistoryRecord, StateValue } from "./history-types";

/** Spec §4's valid-from table, as `@cluster-mirror/machines` exports it (`validFrom`). */
export type ValidFrom = Readonly<Record<string, readonly (string | null)[]>>;

/** Whether `from -> to` is in the table: `@cluster-mirror/machines`' `canTransition` over a served table. */
export function canTransitionIn(table: ValidFrom, from: string | null, to: string): boolean {
  return table[to]?.includes(from) ?? false;
}

/** A mirror partition's identity in `__mirror_state`: mirror, topic id, partition. */
export function historyKeyId(key: NonNullable<StateHistoryRecord["key"]>): string {
  return `${key.mirror}/${key.topicId}/${key.partition}`;
}

/** A partition's state as of some position: its last `MirrorPartitionState` record up to there. */
export interface FoldedPartition {
  readonly id: string;
  readonly mirror: string;
  readonly topic: string;
  readonly partition: number;
  readonly value: StateValue;
  /** Position and time of the record that set it. */
  readonly position: number;
  readonly timestamp: number;
  /** The last `LastMirrorEpochs` value, -1 when none. */
  readonly lastMirrorEpoch: number;
}

/** One change seen in the log: two successive records of a key (or its first record). */
export interface ObservedTransition {
  readonly position: number;
  readonly timestamp: number;
  readonly id: string;
  /** The state of the key's previous record in the log, null for its first record. */
  readonly from: string | null;
  readonly to: string;
  readonly fromStateEpoch: number | null;
  readonly toStateEpoch: number;
  /** Whether spec §4 allows `from -> to` (checked only when no change is missing in between). */
  readonly valid: boolean;
  /**
   * Committed changes between the two records that the log no longer holds (compaction, or a log start
   * moved forward): `toStateEpoch - fromStateEpoch - 1`, or `toStateEpoch - 1` for a key's first record.
   */
  readonly erased: number;
}

/** The fold of the history up to (not including) a position. */
export interface HistoryFold {
  readonly partitions: ReadonlyMap<string, FoldedPartition>;
  readonly transitions: readonly ObservedTransition[];
  /** Transitions spec §4 does not allow. */
  readonly violations: readonly ObservedTransition[];
  /** Transitions with erased changes before them. */
  readonly gaps: readonly ObservedTransition[];
}

/**
 * Folds `records` (in position order) up to `upTo`, as a coordinator replays `__mirror_state`: a value
 * replaces the key's state, a tombstone deletes it. Every record of a key is also compared with the key's
 * previous record: the state change is checked against `validFrom` unless changes are missing in between
 * (a state epoch jump), which is reported as a gap instead of being hidden or flagged as a violation.
 */
export function foldHistory(
  records: readonly StateHistoryRecord[],
  upTo: number,
  validFrom: ValidFrom,
): HistoryFold {
  const partitions = new Map<string, FoldedPartition>();
  const lmes = new Map<string, number>();
  const last = new Map<string, StateValue>();
  const transitions: ObservedTransition[] = [];
  for (const r of records) {
    if (r.position >= upTo) break;
    const key = r.key;
    if (key === null) continue;
    const id = historyKeyId(key);
    if (key.kind === "LastMirrorEpochs") {
      const lme = r.value === null ? -1 : (r.value as { lastMirrorEpoch: number }).lastMirrorEpoch;
      lmes.set(id, lme);
      const p = partitions.get(id);
      if (p) partitions.set(id, { ...p, lastMirrorEpoch: lme });
      continue;
    }
    if (r.value === null) {
      partitions.delete(id);
      last.delete(id);
      continue;
    }
    const value = r.value as StateValue;
    const before = last.get(id) ?? null;
    const erased =
      before === null
        ? Math.max(0, value.stateEpoch - 1)
        : Math.max(0, value.stateEpoch - before.stateEpoch - 1);
    // With changes missing in between, the direct predecessor is the record's own `previousState`.
    const from = erased > 0 ? value.previousState : (before?.state ?? null);
    transitions.push({
      position: r.position,
      timestamp: r.timestamp,
      id,
      from: before?.state ?? null,
      to: value.state,
      fromStateEpoch: before?.stateEpoch ?? null,
      toStateEpoch: value.stateEpoch,
      valid: canTransitionIn(validFrom, from, value.state),
      erased,
    });
    last.set(id, value);
    partitions.set(id, {
      id,
      mirror: key.mirror,
      topic: key.topic ?? key.topicId,
      partition: key.partition,
      value,
      position: r.position,
      timestamp: r.timestamp,
      lastMirrorEpoch: lmes.get(id) ?? -1,
    });
  }
  return {
    partitions,
    transitions,
    violations: transitions.filter((t) => !t.valid),
    gaps: transitions.filter((t) => t.erased > 0),
  };
}

/** One bar of a partition's timeline: successive records in the same state, grouped. */
export interface TimelineSegment {
  readonly state: string;
  readonly start: number;
  /** Time until the next segment began; null for the last one (still in this state). */
  readonly durationMs: number | null;
  /** Records in the group (retries of FAILED, leader epoch updates...). */
  readonly records: number;
  /** Highest `retryAttempt` seen in the group (-1: not retryable). */
  readonly retryAttempt: number;
  readonly errorMessage: string | null;
  readonly firstPosition: number;
  readonly lastPosition: number;
  /** Changes erased by compaction before this segment. */
  readonly erasedBefore: number;
  /** Whether entering this segment was a transition spec §4 does not allow. */
  readonly violation: boolean;
}

/** The timeline of one partition (`id` from {@link historyKeyId}): its records grouped by state. */
export function partitionTimeline(
  records: readonly StateHistoryRecord[],
  id: string,
  validFrom: ValidFrom,
): TimelineSegment[] {
  const mine = records.filter((r) => r.key !== null && historyKeyId(r.key) === id);
  const fold = foldHistory(mine, Number.POSITIVE_INFINITY, validFrom);
  const segments: TimelineSegment[] = [];
  let current: { -readonly [K in keyof TimelineSegment]: TimelineSegment[K] } | null = null;
  for (const t of fold.transitions) {
    const r = mine.find((x) => x.position === t.position) as StateHistoryRecord;
    const value = r.value as StateValue;
    if (current !== null && current.state === t.to && t.erased === 0) {
      current.records++;
      current.lastPosition = t.position;
      current.retryAttempt = value.retryAttempt < 0 ? -1 : Math.max(current.retryAttempt, value.retryAttempt);
      current.errorMessage = value.errorMessage ?? current.errorMessage;
      current.violation ||= !t.valid;
      continue;
    }
    if (current !== null) current.durationMs = t.timestamp - current.start;
    current = {
      state: t.to,
      start: t.timestamp,
      durationMs: null,
      records: 1,
      retryAttempt: value.retryAttempt,
      errorMessage: value.errorMessage,
      firstPosition: t.position,
      lastPosition: t.position,
      erasedBefore: t.erased,
      violation: !t.valid,
    };
    segments.push(current);
  }
  return segments;
}
