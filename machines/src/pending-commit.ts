import { type LifecycleState, type MirrorPartitionStateRecord, NON_RETRYABLE_ATTEMPT } from "./lifecycle";
import type {
  MirrorPartitionContext,
  MirrorPartitionEvent,
  MirrorPartitionFailure,
  PendingCommit,
} from "./mirror-partition.types";
import { retryAttemptsExhausted } from "./retry-backoff";

/** Why a lifecycle change is made: a failure, a FAILED retry, or anything else. */
export type CommitCause =
  | { readonly kind: "failure"; readonly failure: MirrorPartitionFailure }
  | {
      readonly kind: "retry";
      readonly pauseRequested: boolean | undefined;
      /** An operator's recover: the retry starts a fresh attempt budget. */
      readonly recovered?: boolean;
    }
  | { readonly kind: "plain" };

/** The cause an event gives a lifecycle change. */
export function causeOf(event: MirrorPartitionEvent): CommitCause {
  switch (event.type) {
    case "FAIL":
    case "EFFECT_FAILED":
      return { kind: "failure", failure: event };
    case "MIRROR_LOOP_FOUND":
      return { kind: "failure", failure: { message: event.message, retryable: false, random: 0 } };
    case "RETRY_TIMER_FIRED":
      return { kind: "retry", pauseRequested: event.pauseRequested };
    case "RECOVER":
      return { kind: "retry", pauseRequested: event.pauseRequested, recovered: true };
    default:
      return { kind: "plain" };
  }
}

/**
 * Whether the change to `to` starts a new mirroring episode on the topic's log: PREPARING entered from
 * UNKNOWN (a new topic) or STOPPED (a re-add or a failback after a failover). The record's `leaderEpoch`
 * then starts again at -1, so it says whether this episode's log holds mirrored data (a recovered
 * coordinator reads it so; see `recoveredHoldsMirroredData`), not what an earlier episode mirrored.
 */
export function startsNewEpisode(context: MirrorPartitionContext, to: LifecycleState): boolean {
  return to === "PREPARING" && (context.record.state === "STOPPED" || context.record.state === "UNKNOWN");
}

/**
 * Whether a FAILED partition's retry should end paused: what the topic's `mirror.name` asks for as the
 * retry timer fires or the operator recovers it (`pauseRequested` of RETRY_TIMER_FIRED and RECOVER), or,
 * when the event does not say, what FAILED kept (`pauseRequested`, see `pauseRequestedAfter`). Any other
 * event: the context's flag.
 */
export function retryPauseRequested(context: MirrorPartitionContext, event: MirrorPartitionEvent): boolean {
  if ((event.type === "RETRY_TIMER_FIRED" || event.type === "RECOVER") && event.pauseRequested !== undefined)
    return event.pauseRequested;
  return context.pauseRequested;
}

/** Whether `pauseRequested` holds once the change to `to` commits. */
function pauseRequestedAfter(
  context: MirrorPartitionContext,
  to: LifecycleState,
  cause: CommitCause,
): boolean {
  const committed = context.record;
  switch (to) {
    case "PREPARING":
    case "MIRRORING":
      // A retry (or START) of a partition that failed while pausing or paused ends PAUSED again, unless the
      // operator has resumed it since; FAILED keeps which (below), and the retry's timer reads it afresh.
      if (cause.kind === "retry" && cause.pauseRequested !== undefined) return cause.pauseRequested;
      return context.pauseRequested;
    case "FAILED": {
      const pending = context.pending;
      // A failure that replaces a PAUSING change still waiting for its append (a failed append retries
      // after a backoff, and a failure meanwhile commits FAILED at once) keeps the pause: the FAILED record's
      // previousState is the committed MIRRORING, so without it the retry resumed MIRRORING with a fetcher,
      // the PAUSE command was answered by the FAILED commit, and only the metadata manager's next refresh
      // paused the topic (soak faults FC_SEED=506: a full disk failed the PAUSING append, then the fetcher's).
      // Likewise a failure that replaces a resume (PAUSED -> MIRRORING still waiting) keeps the resume: the
      // record's previousState is the committed PAUSED, and the retry went back to PAUSED.
      // A MIRRORING change asked to pause (PREPARING of a paused partition completed, or a retry whose timer
      // read a pause) keeps its pause too; so does the retry of a FAILED partition to PREPARING, MIRRORING or
      // PAUSED: it carries what the topic's `mirror.name` asked when its timer fired, newer than FAILED's.
      // A recovered coordinator reads the same from the topic's `mirror.name`.
      if (pending?.to === "PAUSING" || pending?.to === "PAUSED") return true;
      if (pending?.to === "MIRRORING" || pending?.to === "PREPARING") return pending.pauseRequested;
      if (committed.state === "FAILED") return context.pauseRequested;
      return context.pauseRequested || committed.state === "PAUSING" || committed.state === "PAUSED";
    }
    default:
      return false;
  }
}

/**
 * Builds the complete `__mirror_state` record for the change `context.record.state -> to`. Pure: the record
 * depends only on the committed record, the context and the cause.
 */
export function buildPendingCommit(
  context: MirrorPartitionContext,
  to: LifecycleState,
  cause: CommitCause,
): PendingCommit {
  const committed = context.record;
  const from = committed.state;
  let errorMessage: string | null = null;
  let retryAttempt = 0;
  let retryJitter = context.retryJitter;
  if (to === "FAILED") {
    const failure =
      cause.kind === "failure"
        ? cause.failure
        : { message: "failed without a cause", retryable: false, random: context.retryJitter };
    // A failure after the partition mirrored again starts a new count: the retries it took last time were
    // for another incident. One that keeps failing before it appends anything keeps counting.
    const attempt = failure.afterProgress === true && committed.retryAttempt > 0 ? 0 : committed.retryAttempt;
    const exhausted = attempt >= 0 && retryAttemptsExhausted(attempt, context.retry);
    retryAttempt = !failure.retryable || attempt < 0 || exhausted ? NON_RETRYABLE_ATTEMPT : attempt;
    errorMessage =
      exhausted && failure.retryable
        ? `${failure.message} (gave up after ${attempt} retries)`
        : failure.message;
    retryJitter = failure.random;
  } else if (cause.kind === "retry") {
    // The retry in progress: if it fails again, FAILED schedules the next, longer, backoff. An operator's
    // recover starts over: a failure after it backs off from the first delay, with every attempt again.
    retryAttempt = cause.recovered === true ? 0 : committed.retryAttempt + 1;
  }

  const record: MirrorPartitionStateRecord = {
    state: to,
    leaderEpoch: startsNewEpisode(context, to)
      ? -1
      : Math.max(committed.leaderEpoch, context.highestBatchEpoch),
    stateEpoch: committed.stateEpoch + 1,
    errorMessage,
    retryAttempt,
    // A failure while FAILED keeps the state that first failed, so the retry goes back to the right place.
    previousState: from === "FAILED" && to === "FAILED" ? committed.previousState : from,
  };
  return { to, record, retryJitter, pauseRequested: pauseRequestedAfter(context, to, cause) };
}
