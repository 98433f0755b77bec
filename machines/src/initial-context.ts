import { UNKNOWN_PARTITION } from "./lifecycle";
import type { MirrorPartitionContext, MirrorPartitionInput } from "./mirror-partition.types";
import { DEFAULT_RETRY_BACKOFF } from "./retry-backoff";

/**
 * The context of a partition built from its input: shared by the machine's `context` factory and the bulk
 * `rehydratePartition`, so both start from the same values. Throws `RangeError` when a retryable FAILED
 * record comes without the fresh random number its retry needs.
 */
export function initialContext(input: MirrorPartitionInput | undefined): MirrorPartitionContext {
  const record = input?.record ?? UNKNOWN_PARTITION;
  const failedRetryable = record.state === "FAILED" && record.retryAttempt >= 0;
  if (failedRetryable && input?.retryJitter === undefined) {
    throw new RangeError(
      "A recovered retryable FAILED mirror partition needs retryJitter (a number in [0, 1) from the runtime's Random)",
    );
  }
  // The LME in LastMirrorEpochs belongs to the current failover only in the failover states: PREPARING
  // resets it to -1 (clearLastMirrorEpoch), so a value >= 0 there was captured after the last start.
  const inFailover = record.state === "STOPPING" || record.state === "STOPPED" || record.state === "FAILED";
  return {
    record,
    lastMirrorEpoch: record.lastMirrorEpoch,
    lmeCaptured: inFailover && record.lastMirrorEpoch >= 0,
    localLeaderEpoch: input?.localLeaderEpoch ?? -1,
    highestBatchEpoch: record.leaderEpoch,
    sourceLastMirrorEpoch: -1,
    proactiveBumpMin: null,
    pauseRequested: input?.pauseRequested ?? false,
    deferredFailure: null,
    retryJitter: input?.retryJitter ?? 0,
    commitAttempt: 0,
    commitJitter: 0,
    pending: null,
    retry: input?.retry ?? DEFAULT_RETRY_BACKOFF,
  };
}
