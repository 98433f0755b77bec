/**
 * The mirror partition lifecycle of spec §4 and the `__mirror_state` value of spec §6, as plain types. The
 * state names, the record's fields and `NON_RETRYABLE_ATTEMPT` are the protocol package's (its codec writes
 * them), so the machine and the bytes cannot drift apart.
 */
import {
  type MirrorPartitionStateName,
  type MirrorPartitionStateValue,
  NON_RETRYABLE_ATTEMPT,
} from "@cluster-mirror/protocol";

export { NON_RETRYABLE_ATTEMPT };

/** A lifecycle state of spec §4. UNKNOWN is "no cached state" and is never appended to `__mirror_state`. */
export type LifecycleState = MirrorPartitionStateName;

/** Every lifecycle state of spec §4, in the table's order (a type test checks it lists every protocol name). */
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
] as const satisfies readonly LifecycleState[];

/** Whether `value` names a lifecycle state. */
export function isLifecycleState(value: string): value is LifecycleState {
  return (LIFECYCLE_STATES as readonly string[]).includes(value);
}

/** Kafka's increment when the mirror bumps the local leader epoch (the later KIP revision's constant). */
export const LEADER_EPOCH_BUMP_INCREMENT = 10;

/** A proactive bump is requested when a mirrored batch's epoch comes within this distance of the local one. */
export const LEADER_EPOCH_BUMP_THRESHOLD = 3;

/**
 * `minLeaderEpoch` of the failover bump (spec §4 STOPPING step 2): above the LME and the local epoch, by the
 * bump increment rather than by one. Local writes then carry an epoch number the source's own next leader
 * elections do not reach soon: should this cluster be re-added from the source later, a copy downstream of
 * it (a chain) tells the source's batches from this cluster's local ones by their epochs (KIP-320), which it
 * cannot where both carry the same number from the same offset. The controller's bump then gives
 * `max(leaderEpoch + 1, this)`, which is this.
 */
export function failoverMinLeaderEpoch(lastMirrorEpoch: number, leaderEpoch: number): number {
  return Math.max(lastMirrorEpoch, leaderEpoch) + LEADER_EPOCH_BUMP_INCREMENT;
}

/**
 * The `MirrorPartitionState` value of spec §6 (the protocol codec's value, read-only): a complete record,
 * never a delta. `leaderEpoch` is the highest leader epoch among the *mirrored* batches seen, as of the last
 * commit; the local leader epoch is not part of it.
 */
export type MirrorPartitionStateRecord = Readonly<MirrorPartitionStateValue>;

/**
 * What a coordinator hands a partition actor on rehydration: the last `MirrorPartitionState` value for the
 * key plus the last `LastMirrorEpochs` value (-1 when that record is absent).
 */
export interface RecoveredPartition extends MirrorPartitionStateRecord {
  /** The LME this cluster recorded at its current failover (spec §4 STOPPING step 2); -1 when none. */
  readonly lastMirrorEpoch: number;
  /**
   * The LME was recorded after the latest state record: the failover in progress captured it, even when it
   * is -1 (nothing mirrored). A STOPPING resumed after its own writes must not capture again: the log's
   * latest epoch would then be that of its own ABORT markers and barrier.
   */
  readonly lastMirrorEpochCaptured?: boolean;
  /**
   * PREPARING's truncation completed in the current mirroring session (its LastMirrorEpochs tombstone is in
   * the history since the session began) and no LME was captured since: the log is a copy of the source. A
   * recovered PREPARING (or a FAILED retry of it) then does not truncate again: the LME that served the cut
   * is cleared, and truncating without one would drop the whole log.
   */
  readonly alignedInSession?: boolean;
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
