import type { LifecycleState, MirrorPartitionStateRecord, RecoveredPartition } from "./lifecycle";
import type { RetryBackoffOptions } from "./retry-backoff";

/** Operator and metadata-manager commands (spec §4 "Triggers"). Refused with a typed error when invalid. */
export type MirrorPartitionCommand =
  /** Add the topic to the mirror, add a STOPPED topic back, or recover a FAILED one: -> PREPARING. */
  | { readonly type: "START" }
  /** `mirror.name` gained `.paused`: MIRRORING -> PAUSING. */
  | { readonly type: "PAUSE" }
  /** The `.paused` suffix was cleared: PAUSED -> MIRRORING. */
  | { readonly type: "RESUME" }
  /** `.removed` suffix or source topic deleted: failover, -> STOPPING. */
  | { readonly type: "STOP" }
  /** A failure found outside the partition's own effects (e.g. source cluster id changed): -> FAILED. */
  | {
      readonly type: "FAIL";
      readonly message: string;
      readonly retryable: boolean;
      /** A number in [0, 1) from the runtime's Random, used for the retry's full jitter. */
      readonly random: number;
    };

/** Results of the effects the machine requested, reported back by the runtime. */
export type MirrorPartitionEffectResult =
  | { readonly type: "MIRROR_LOOP_CHECKED" }
  | { readonly type: "LME_FOUND"; readonly lme: number }
  | { readonly type: "TRUNCATED" }
  | { readonly type: "ISR_TRUNCATED" }
  | { readonly type: "EPOCH_OBSERVED"; readonly batchEpoch: number }
  | { readonly type: "EPOCH_BUMPED"; readonly leaderEpoch: number }
  | { readonly type: "FETCHER_REMOVED" }
  | { readonly type: "LME_RECORDED"; readonly lme: number }
  | { readonly type: "TXNS_ABORTED" }
  | { readonly type: "PID_RESET_APPENDED" }
  | { readonly type: "RETRY_TIMER_FIRED" }
  | {
      readonly type: "EFFECT_FAILED";
      readonly message: string;
      readonly retryable: boolean;
      /** A number in [0, 1) from the runtime's Random, used for the retry's full jitter. */
      readonly random: number;
    };

/** The outcome of `appendStateRecord`: only COMMITTED changes the lifecycle state. */
export type MirrorPartitionCommitResult =
  | { readonly type: "COMMITTED" }
  | { readonly type: "COMMIT_FAILED"; readonly message: string }
  /** The coordinator lost leadership of its `__mirror_state` partition: the append was rejected. */
  | { readonly type: "FENCED"; readonly message: string };

/** Every event the mirror partition machine accepts. */
export type MirrorPartitionEvent =
  | MirrorPartitionCommand
  | MirrorPartitionEffectResult
  | MirrorPartitionCommitResult;

/** A lifecycle change that waits for its `__mirror_state` record to be appended. */
export interface PendingCommit {
  /** The lifecycle state the partition enters once the record is appended. */
  readonly to: LifecycleState;
  /** The complete record being appended. */
  readonly record: MirrorPartitionStateRecord;
  /** The jitter the target FAILED state will use for its retry timer. */
  readonly retryJitter: number;
}

/** The mirror partition machine's context. Small on purpose: 100,000 of these live in one coordinator. */
export interface MirrorPartitionContext {
  /** The committed `__mirror_state` value: what `describe`, metrics and the visualizer read. */
  readonly record: MirrorPartitionStateRecord;
  /** The LME this cluster recorded at its last failover; -1 when unknown. */
  readonly lastMirrorEpoch: number;
  /** Number in [0, 1) for the full-jitter retry delay in FAILED (an input: never `Math.random()`). */
  readonly retryJitter: number;
  /** The lifecycle change waiting for its append, or null. */
  readonly pending: PendingCommit | null;
  /** Retry backoff tuning. */
  readonly retry: RetryBackoffOptions;
}

/** Input of the mirror partition machine: rehydrate from a record, or start fresh in UNKNOWN. */
export interface MirrorPartitionInput {
  /** The last records for the key (spec §6); absent or null means no cached state (UNKNOWN). */
  readonly record?: RecoveredPartition | null;
  /** Number in [0, 1) for the retry jitter of a recovered FAILED partition; defaults to 1 (the full ceiling). */
  readonly retryJitter?: number;
  /** Retry backoff tuning; defaults to `DEFAULT_RETRY_BACKOFF`. */
  readonly retry?: RetryBackoffOptions;
}

/** Parameters of `appendStateRecord`: the complete record to append to `__mirror_state`. */
export type AppendStateRecordParams = MirrorPartitionStateRecord;

/** Parameters of `bumpLeaderEpoch`: ask the controller for a leader epoch at least this high. */
export interface BumpLeaderEpochParams {
  readonly minLeaderEpoch: number;
}

/** Parameters of `truncateToEpoch`: truncate the local log to the end offset of this epoch. */
export interface TruncateToEpochParams {
  readonly lme: number;
}

/** Parameters of `scheduleRetry`: the runtime arms a timer that sends RETRY_TIMER_FIRED after `delayMs`. */
export interface ScheduleRetryParams {
  /** The retry about to be scheduled, 0-based. */
  readonly attempt: number;
  /** Full-jitter delay in ms. */
  readonly delayMs: number;
}
