import { type LifecycleState, type MirrorPartitionStateRecord, NON_RETRYABLE_ATTEMPT } from "./lifecycle";
import type { MirrorPartitionContext, MirrorPartitionEvent, PendingCommit } from "./mirror-partition.types";

/**
 * Builds the complete `__mirror_state` record for the change `context.record.state -> to` caused by `event`.
 * Pure: the record depends only on the committed record, the event and the retry options.
 */
export function buildPendingCommit(
  context: MirrorPartitionContext,
  event: MirrorPartitionEvent,
  to: LifecycleState,
): PendingCommit {
  const committed = context.record;
  const from = committed.state;
  let leaderEpoch = committed.leaderEpoch;
  if (event.type === "EPOCH_OBSERVED") leaderEpoch = Math.max(leaderEpoch, event.batchEpoch);
  if (event.type === "EPOCH_BUMPED") leaderEpoch = Math.max(leaderEpoch, event.leaderEpoch);

  let errorMessage: string | null = null;
  let retryAttempt = 0;
  let retryJitter = context.retryJitter;
  if (to === "FAILED") {
    const failure =
      event.type === "FAIL" || event.type === "EFFECT_FAILED"
        ? event
        : { message: `unexpected ${event.type}`, retryable: false, random: 1 };
    const attempt = committed.retryAttempt;
    const exhausted = attempt >= context.retry.maxAttempts;
    retryAttempt = !failure.retryable || attempt < 0 || exhausted ? NON_RETRYABLE_ATTEMPT : attempt;
    errorMessage =
      exhausted && failure.retryable && attempt >= 0
        ? `${failure.message} (gave up after ${attempt} retries)`
        : failure.message;
    retryJitter = failure.random;
  } else if (event.type === "RETRY_TIMER_FIRED") {
    // The retry in progress: if it fails again, FAILED schedules the next, longer, backoff.
    retryAttempt = committed.retryAttempt + 1;
  }

  const record: MirrorPartitionStateRecord = {
    state: to,
    leaderEpoch,
    stateEpoch: committed.stateEpoch + 1,
    errorMessage,
    retryAttempt,
    // A failure while FAILED keeps the state that first failed, so the retry goes back to the right place.
    previousState: from === "FAILED" && to === "FAILED" ? committed.previousState : from,
  };
  return { to, record, retryJitter };
}
