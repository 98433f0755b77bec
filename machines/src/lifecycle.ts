/**
 * The mirror partition lifecycle of spec §4 and the `__mirror_state` value of spec §6, as plain types.
 * The protocol package encodes the same fields in binary; the names here are the record's names.
 */

/** Every lifecycle state of spec §4, in the table's order. */
export const LIFECYCLE_STATES = [
  "UNKNOWN",
  "PREPARING",
  "MIRRORING",
  "EPOCH_FENCING",
  "PAUSING",
  "PAUSED",
  "STOPPING",
  "STOPPED",
  "FAILED",
] as const;

/** A lifecycle state of spec §4. UNKNOWN is "no cached state" and is never appended to `__mirror_state`. */
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

/** Whether `value` names a lifecycle state. */
export function isLifecycleState(value: string): value is LifecycleState {
  return (LIFECYCLE_STATES as readonly string[]).includes(value);
}

/** `RetryAttempt` value meaning "do not retry": a non-retryable cause or an exhausted attempt limit. */
export const NON_RETRYABLE_ATTEMPT = -1;

/** Kafka's increment when the mirror bumps the local leader epoch (the later KIP revision's constant). */
export const LEADER_EPOCH_BUMP_INCREMENT = 10;

/** A proactive bump is requested when a mirrored batch's epoch comes within this distance of the local one. */
export const LEADER_EPOCH_BUMP_THRESHOLD = 3;

/**
 * The `MirrorPartitionState` value of spec §6: a complete record, never a delta, so replaying the compacted
 * log and replaying the full history give the same state.
 */
export interface MirrorPartitionStateRecord {
  /** The committed lifecycle state. */
  readonly state: LifecycleState;
  /** The highest leader epoch seen for the partition (local or in a mirrored batch); -1 when none. */
  readonly leaderEpoch: number;
  /** Monotonic, +1 per committed transition. */
  readonly stateEpoch: number;
  /** Why the partition is FAILED; null in every other state. */
  readonly errorMessage: string | null;
  /** Retries started so far; -1 means non-retryable (stay FAILED until an operator removes the topic). */
  readonly retryAttempt: number;
  /** The state before the last committed transition; null before the first one. */
  readonly previousState: LifecycleState | null;
}

/**
 * What a coordinator hands a partition actor on rehydration: the last `MirrorPartitionState` value for the
 * key plus the last `LastMirrorEpochs` value (-1 when that record is absent).
 */
export interface RecoveredPartition extends MirrorPartitionStateRecord {
  /** The LME this cluster recorded when it last failed over (spec §4 STOPPING step 2); -1 when unknown. */
  readonly lastMirrorEpoch: number;
}

/** The record of a partition that has no cached state yet (spec §4 UNKNOWN). */
export const UNKNOWN_PARTITION: RecoveredPartition = Object.freeze({
  state: "UNKNOWN",
  leaderEpoch: -1,
  stateEpoch: 0,
  errorMessage: null,
  retryAttempt: 0,
  previousState: null,
  lastMirrorEpoch: -1,
});
