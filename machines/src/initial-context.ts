import { type LifecycleState, type RecoveredPartition, UNKNOWN_PARTITION } from "./lifecycle";
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
  // PREPARING clears LastMirrorEpochs (durably, before MIRRORING) once its truncation made the log a copy of
  // the source. So in a failover state a value >= 0 was either captured in this failover, or is the earlier
  // failover's LME kept because the log never became a copy of the source since: in both cases it is what a
  // capture now must record, so it counts as captured.
  // A value of -1 counts as captured when it was recorded after the state record (a STOPPING that captured
  // -1 and was resumed): capturing again would read the epoch of its own writes.
  const inFailover = record.state === "STOPPING" || record.state === "STOPPED" || record.state === "FAILED";
  const lmeCaptured = inFailover && (record.lastMirrorEpoch >= 0 || record.lastMirrorEpochCaptured === true);
  const cut = recoveredCutUnrecorded(record, input?.logLatestEpoch);
  return {
    record,
    lastMirrorEpoch: record.lastMirrorEpoch,
    lmeCaptured,
    aligned: recoveredAligned(record, lmeCaptured),
    // The log's local writes above the recorded LME overrule the records only where they cannot tell (a
    // failover retried after STOPPED); a partition recovered MIRRORING or PAUSED holds mirrored data.
    holdsMirroredData:
      cut ||
      (recoveredHoldsMirroredData(record) &&
        (ALIGNED_STATES.has(record.state) || input?.localWritesAboveLme !== true)),
    localLeaderEpoch: input?.localLeaderEpoch ?? -1,
    // As TRUNCATED's `noteAligned`: the next record's leaderEpoch (>= 0) carries the cut to a later recovery.
    highestBatchEpoch: cut ? Math.max(record.leaderEpoch, 0) : record.leaderEpoch,
    sourceLastMirrorEpoch: -1,
    proactiveBumpMin: null,
    pauseRequested: input?.pauseRequested ?? false,
    deferredFailure: null,
    retryJitter: input?.retryJitter ?? 0,
    commitAttempt: 0,
    commitJitter: 0,
    commitMaybeAppended: false,
    pending: null,
    retry: input?.retry ?? DEFAULT_RETRY_BACKOFF,
  };
}

/** States whose log is a copy of the source: PREPARING's truncation completed before them. */
const ALIGNED_STATES: ReadonlySet<LifecycleState | null> = new Set<LifecycleState>([
  "MIRRORING",
  "EPOCH_FENCING",
  "PAUSING",
  "PAUSED",
]);

/**
 * `aligned` of a recovered partition (see `MirrorPartitionContext.aligned`). When the record cannot tell, it
 * says not aligned, the safe side: a failover then keeps the recorded LME (or -1), so a later failback
 * truncates more, never to the end of an epoch of local batches.
 * - MIRRORING, EPOCH_FENCING, PAUSING, PAUSED: aligned.
 * - PREPARING: when its truncation completed in this session (`alignedInSession`, from the history).
 * - UNKNOWN, STOPPED: not (STOPPED appended locally).
 * - STOPPING, FAILED: aligned when the previous state was one of the aligned states above, or the session's
 *   truncation completed, and no LME was captured yet (STOPPING appends locally only after the capture).
 */
function recoveredAligned(record: RecoveredPartition, lmeCaptured: boolean): boolean {
  switch (record.state) {
    case "MIRRORING":
    case "EPOCH_FENCING":
    case "PAUSING":
    case "PAUSED":
      return true;
    case "STOPPING":
    case "FAILED":
      return !lmeCaptured && (ALIGNED_STATES.has(record.previousState) || record.alignedInSession === true);
    case "PREPARING":
      return record.alignedInSession === true;
    default:
      return false;
  }
}

/**
 * `holdsMirroredData` of a recovered partition (see `MirrorPartitionContext.holdsMirroredData`), from the
 * records alone:
 * - MIRRORING, EPOCH_FENCING, PAUSING, PAUSED, or PREPARING/STOPPING/FAILED coming from one of them: yes.
 * - UNKNOWN, STOPPED, or a state entered from UNKNOWN or STOPPED (a new episode on the topic's own log): no.
 * - PREPARING, or FAILED from PREPARING, with a LastMirrorEpochs value: no. The value of the last failover
 *   is kept until PREPARING's truncation completes, so the log's tail is still the topic's own writes
 *   (unless the log shows the truncation cut it, `recoveredCutUnrecorded`).
 * - Otherwise (STOPPING or FAILED after a chain of PREPARING/STOPPING/FAILED): whether this episode's log
 *   holds mirrored data, `leaderEpoch >= 0`: the record keeps the highest mirrored batch epoch it saw, at
 *   least 0 once PREPARING's truncation made the log a copy of the source, and starts again at -1 with
 *   each episode (PREPARING entered from UNKNOWN or STOPPED).
 * The records cannot tell a STOPPED that failed again apart: its retry's STOPPING (previous state FAILED)
 * keeps the episode's `leaderEpoch`, as a failover retried from FAILED after MIRRORING does, although the
 * live coordinator's STOPPED closed the mirrored data (`holdsMirroredDataAfter`). The log tells
 * (`MirrorPartitionInput.localWritesAboveLme`, read from the leader as the coordinator loads): data above the recorded LME was
 * written by local producers once that failover made the topic writable, and a failover resumed over it must
 * leave their producer state and transactions alone, as the live coordinator does (no PID reset over them,
 * no ABORT marker over a live transaction).
 */
function recoveredHoldsMirroredData(record: RecoveredPartition): boolean {
  if (ALIGNED_STATES.has(record.state)) return true;
  if (record.state !== "PREPARING" && record.state !== "STOPPING" && record.state !== "FAILED") return false;
  if (record.alignedInSession === true) return true;
  const prev = record.previousState;
  if (ALIGNED_STATES.has(prev)) return true;
  if (prev === null || prev === "UNKNOWN" || prev === "STOPPED") return false;
  const preparing = record.state === "PREPARING" || (record.state === "FAILED" && prev === "PREPARING");
  if (preparing && record.lastMirrorEpoch >= 0) return false;
  return record.leaderEpoch >= 0;
}

/**
 * Whether a recovered PREPARING (or FAILED from PREPARING) whose records still hold the LME of the earlier
 * failover finds its log cut to that LME although no record says so: the truncation cut the log, and the
 * coordinator was lost before the LastMirrorEpochs tombstone (or the MIRRORING record) was durable. The log
 * shows it (`logLatestEpoch`, the epoch of the data partition's last offset on its leader when the
 * coordinator loaded): no batch in an epoch above the recorded LME. Every batch written here since that
 * failover is above it (the failover bumped the leader epoch above the LME it recorded before it wrote its
 * ABORT markers and PID reset, and before local producers wrote), so none survives: the log holds mirrored
 * data only, and its producer state is the source's. The source's transactions the cut reopened are open
 * in it, and a failover (a removal before the truncation runs again, e.g. the source is down) must abort
 * them as the live coordinator's would after TRUNCATED. A log that still holds the failover's markers or
 * local writes is the topic's own: no.
 */
function recoveredCutUnrecorded(record: RecoveredPartition, logLatestEpoch: number | undefined): boolean {
  const preparing =
    record.state === "PREPARING" || (record.state === "FAILED" && record.previousState === "PREPARING");
  return (
    preparing &&
    record.alignedInSession !== true &&
    record.lastMirrorEpoch >= 0 &&
    logLatestEpoch !== undefined &&
    logLatestEpoch <= record.lastMirrorEpoch
  );
}
