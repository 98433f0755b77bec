import type { LifecycleState, MirrorPartitionStateRecord, RecoveredPartition } from "./lifecycle";
import type { RetryBackoffOptions } from "./retry-backoff";

/** A failure cause: why, whether a retry may help, and the runtime's random number for the retry's jitter. */
export interface MirrorPartitionFailure {
  readonly message: string;
  readonly retryable: boolean;
  /** A number in [0, 1) from the runtime's Random, used for the retry's full jitter. */
  readonly random: number;
  /**
   * The partition mirrored (appended fetched batches) since its fetcher was last added: this failure is a
   * new incident, not the retry before it failing again, so the attempt count starts over. Without it,
   * incidents months apart added up until the partition stayed FAILED for good.
   */
  readonly afterProgress?: boolean;
}

/** Operator and metadata-manager commands (spec §4 "Triggers"). Refused with a typed error when invalid. */
export type MirrorPartitionCommand =
  /** Add the topic to the mirror, add a STOPPED topic back, or recover a retryable FAILED one: -> PREPARING. */
  | { readonly type: "START" }
  /** `mirror.name` gained `.paused`: MIRRORING -> PAUSING. */
  | { readonly type: "PAUSE" }
  /** The `.paused` suffix was cleared: PAUSED -> MIRRORING. */
  | { readonly type: "RESUME" }
  /** `.removed` suffix or source topic deleted: failover, -> STOPPING. */
  | { readonly type: "STOP" }
  /** A failure found outside the partition's own effects (e.g. source cluster id changed): -> FAILED. */
  | ({ readonly type: "FAIL" } & MirrorPartitionFailure)
  /**
   * The operator's recover (the later KIP revision's RecoverMirrorTopics): a FAILED partition, retryable or
   * not, retries now with a fresh attempt budget, where its retry timer would go. The caller checks first
   * that the causes no retry gets past (source cluster id changed, source topic deleted) are gone.
   */
  | {
      readonly type: "RECOVER";
      /** Whether the topic's `mirror.name` asks for a pause now (as `RETRY_TIMER_FIRED.pauseRequested`). */
      readonly pauseRequested?: boolean;
    };

/**
 * Results of the effects the machine requested, reported back by the runtime. Each carries the `stateEpoch`
 * of the effect it answers; a result whose epoch is not the committed one is stale and dropped.
 */
export type MirrorPartitionEffectResult =
  | { readonly type: "MIRROR_LOOP_CHECKED"; readonly stateEpoch: number }
  /** The source mirrors this cluster's topic back (spec §4 PREPARING step 1): FAILED, non-retryable. */
  | { readonly type: "MIRROR_LOOP_FOUND"; readonly stateEpoch: number; readonly message: string }
  | { readonly type: "LME_FOUND"; readonly stateEpoch: number; readonly lme: number }
  | { readonly type: "TRUNCATED"; readonly stateEpoch: number }
  | { readonly type: "ISR_TRUNCATED"; readonly stateEpoch: number }
  | { readonly type: "EPOCH_BUMPED"; readonly stateEpoch: number; readonly leaderEpoch: number }
  | {
      readonly type: "FETCHER_REMOVED";
      readonly stateEpoch: number;
      /** The local log's latest leader epoch, read before any local append (the LME candidate). */
      readonly latestMirroredEpoch: number;
    }
  | { readonly type: "LME_RECORDED"; readonly stateEpoch: number }
  | { readonly type: "TXNS_ABORTED"; readonly stateEpoch: number }
  | { readonly type: "PID_RESET_APPENDED"; readonly stateEpoch: number }
  | {
      readonly type: "RETRY_TIMER_FIRED";
      readonly stateEpoch: number;
      /**
       * Whether the topic's `mirror.name` asks for a pause as the timer fires (the runtime reads it then), or
       * undefined when not known: the retry of a log still a copy of the source then ends PAUSED or
       * MIRRORING as the operator asks now, not as the partition was when it failed.
       */
      readonly pauseRequested?: boolean;
    }
  | ({ readonly type: "EFFECT_FAILED"; readonly stateEpoch: number } & MirrorPartitionFailure);

/**
 * Observations from the data path (not answers to a request, so no `stateEpoch`): a fetched batch's leader
 * epoch and the local leader epoch at the time. Only MIRRORING acts on it.
 */
export type MirrorPartitionObservation = {
  readonly type: "EPOCH_OBSERVED";
  readonly batchEpoch: number;
  readonly localLeaderEpoch: number;
};

/**
 * The outcome of `appendStateRecord` (and of its retry timer); `stateEpoch` is the appended record's. Only
 * COMMITTED changes the lifecycle state.
 */
export type MirrorPartitionCommitResult =
  | { readonly type: "COMMITTED"; readonly stateEpoch: number }
  /** A transient append failure: the same record is appended again after a backoff. */
  | {
      readonly type: "COMMIT_FAILED";
      /**
       * The append may have reached the log all the same (the in-sync replicas did not acknowledge it in
       * time): the record may commit later, so no other record may take its stateEpoch.
       */
      readonly maybeAppended?: boolean;
      readonly stateEpoch: number;
      readonly message: string;
      /** A number in [0, 1) from the runtime's Random, for the commit retry's jitter. */
      readonly random: number;
    }
  | { readonly type: "COMMIT_RETRY_TIMER_FIRED"; readonly stateEpoch: number }
  /** Another coordinator leads the `__mirror_state` partition now: the actor ends in `fenced`. */
  | { readonly type: "FENCED"; readonly stateEpoch: number; readonly message: string };

/** Every event the mirror partition machine accepts. */
export type MirrorPartitionEvent =
  | MirrorPartitionCommand
  | MirrorPartitionEffectResult
  | MirrorPartitionObservation
  | MirrorPartitionCommitResult;

/** A lifecycle change that waits for its `__mirror_state` record to be appended. */
export interface PendingCommit {
  /** The lifecycle state the partition enters once the record is appended. */
  readonly to: LifecycleState;
  /** The complete record being appended. */
  readonly record: MirrorPartitionStateRecord;
  /** The jitter the target FAILED state will use for its retry timer. */
  readonly retryJitter: number;
  /** `pauseRequested` once the change commits. */
  readonly pauseRequested: boolean;
}

/** The mirror partition machine's context. Small on purpose: 100,000 of these live in one coordinator. */
export interface MirrorPartitionContext {
  /** The committed `__mirror_state` value: what `describe`, metrics and the visualizer read. */
  readonly record: MirrorPartitionStateRecord;
  /**
   * This cluster's LME (the `LastMirrorEpochs` value); -1 when none. Kept through PREPARING until its
   * truncation completes (then -1), so a failover before that keeps the LME of the earlier one.
   */
  readonly lastMirrorEpoch: number;
  /** Whether `lastMirrorEpoch` was captured in the current failover (it is captured exactly once). */
  readonly lmeCaptured: boolean;
  /**
   * Whether the local log is a copy of the current source: false when PREPARING starts (except a FAILED
   * retry of an aligned log), true once its truncation completed (TRUNCATED), kept through MIRRORING,
   * EPOCH_FENCING, PAUSING and PAUSED, false once STOPPING captured the LME (it appends locally next).
   * STOPPING captures the log's latest epoch as the LME only when aligned; otherwise it keeps the LME
   * recorded before (spec §4 STOPPING step 2: the LME is over *mirrored* batches).
   */
  readonly aligned: boolean;
  /**
   * Whether the local log holds mirrored data whose producer state a failover must close (STOPPING's ABORT
   * markers and PID reset). True once PREPARING's truncation made the log a copy of the source or the
   * partition mirrored; false for a log that never held mirrored data (e.g. a live primary added by mistake
   * and removed) and once STOPPED (local producers write next). Derived from the `__mirror_state` records on
   * recovery (`initialContext`), so a restarted coordinator decides as the first one did.
   */
  readonly holdsMirroredData: boolean;
  /** The local (destination) partition leader epoch, an input; not persisted. */
  readonly localLeaderEpoch: number;
  /** Highest leader epoch among the mirrored batches seen; goes into `record.leaderEpoch` at the next commit. */
  readonly highestBatchEpoch: number;
  /**
   * The LME PREPARING truncates to: the higher (later) of the source's answer and this partition's own
   * `lastMirrorEpoch` (`alignmentLastMirrorEpoch`); -1: truncate fully.
   */
  readonly sourceLastMirrorEpoch: number;
  /** `minLeaderEpoch` of the proactive bump in flight while MIRRORING, or null (so a bump is asked once). */
  readonly proactiveBumpMin: number | null;
  /**
   * Go to PAUSED (not MIRRORING) once PREPARING completes: a retry of a paused partition. In FAILED: whether
   * the retry ends paused, when its timer does not say (`RETRY_TIMER_FIRED.pauseRequested`).
   */
  readonly pauseRequested: boolean;
  /** A failure that arrived while a commit was in flight; applied once the commit settles. */
  readonly deferredFailure: MirrorPartitionFailure | null;
  /** Number in [0, 1) for the full-jitter retry delay in FAILED (an input: never `Math.random()`). */
  readonly retryJitter: number;
  /** COMMIT_FAILED answers in a row for the pending record; drives the commit retry backoff. */
  readonly commitAttempt: number;
  /** Jitter of the next commit retry (from COMMIT_FAILED). */
  readonly commitJitter: number;
  /**
   * A COMMIT_FAILED for the pending record said it may be on the log all the same: until it commits, a
   * failure waits for it (deferred) instead of replacing it with a FAILED record of the same stateEpoch.
   */
  readonly commitMaybeAppended: boolean;
  /** The lifecycle change waiting for its append, or null. */
  readonly pending: PendingCommit | null;
  /** Retry backoff tuning. */
  readonly retry: RetryBackoffOptions;
}

/** Input of the mirror partition machine: rehydrate from records, or start fresh in UNKNOWN. */
export interface MirrorPartitionInput {
  /** The last records for the key (spec §6); absent or null means no cached state (UNKNOWN). */
  readonly record?: RecoveredPartition | null;
  /** The local partition leader epoch now; -1 (the default) when not known yet. */
  readonly localLeaderEpoch?: number;
  /**
   * The epoch of the data partition's last offset on its leader now (`LocalReplica.latestEpoch`; -1 for an
   * empty log), or undefined when not known (no leader). A recovered PREPARING reads from it whether its
   * truncation cut the log before the coordinator was lost (see `recoveredCutUnrecorded`).
   */
  readonly logLatestEpoch?: number;
  /**
   * The data partition's leader holds a data batch above the LME this cluster recorded at its last
   * failover (a `LastMirrorEpochs` value, not a tombstone; `LocalReplica.hasDataBatchAbove`): local
   * producers wrote there after that failover's barrier, so the log's producer state is the topic's own
   * (see `initialContext`). Undefined when not known (no leader) or no LME is recorded.
   */
  readonly localWritesAboveLme?: boolean;
  /**
   * Number in [0, 1) from the runtime's Random for the retry of a recovered FAILED partition. Required when
   * the record is a retryable FAILED one (a fresh number per recovery, so retries do not synchronize).
   */
  readonly retryJitter?: number;
  /**
   * Whether the topic is paused (its `mirror.name` has the `.paused` suffix). Not in the record: it makes a
   * recovered PREPARING or MIRRORING partition end in PAUSED. Default false.
   */
  readonly pauseRequested?: boolean;
  /** Retry backoff tuning; defaults to `DEFAULT_RETRY_BACKOFF`. */
  readonly retry?: RetryBackoffOptions;
}

/** What every effect carries: the `stateEpoch` it was requested under; its result must carry it back. */
export interface EffectParams {
  readonly stateEpoch: number;
}

/** Parameters of `appendStateRecord`: the complete record to append (its `stateEpoch` is the new one). */
export type AppendStateRecordParams = MirrorPartitionStateRecord;

/** Parameters of `bumpLeaderEpoch`: ask the controller for a leader epoch at least this high. */
export interface BumpLeaderEpochParams extends EffectParams {
  readonly minLeaderEpoch: number;
}

/** Parameters of `truncateToEpoch`: truncate the local log to the end offset of this epoch. */
export interface TruncateToEpochParams extends EffectParams {
  readonly lme: number;
}

/**
 * Parameters of `appendPidReset`: the LME this STOPPING captured. A MIRROR_PID_RESET already at the log
 * end counts as this failover's own (a resumed STOPPING writes no second one) only when written at an epoch
 * above it; one at or below it was mirrored (the source's own failover barrier) and is no barrier of this
 * failover.
 */
export interface AppendPidResetParams extends EffectParams {
  readonly lme: number;
}

/** Parameters of `recordLastMirrorEpoch`: write `LastMirrorEpochs { lme }` to `__mirror_state`. */
export interface RecordLastMirrorEpochParams extends EffectParams {
  readonly lme: number;
}

/** Parameters of `scheduleRetry` / `scheduleCommitRetry`: arm a timer that fires after `delayMs`. */
export interface ScheduleRetryParams extends EffectParams {
  /** The retry about to be scheduled, 0-based. */
  readonly attempt: number;
  /** Full-jitter delay in ms. */
  readonly delayMs: number;
}
