import { ClusterError } from "@cluster-mirror/cluster";

/**
 * The destination leader a step ran on, as the metadata named it when the step took its replica: a FAILED
 * whose step that leader refused retries at once only under a newer one, or once that leader, lagging the
 * metadata's epoch when it refused, knows it (`leaderChangedSince`; Kafka's producer, KIP-951: a batch
 * refused with NOT_LEADER_OR_FOLLOWER skips its backoff only once the metadata names a newer leader epoch,
 * `ProducerBatch.hasLeaderChangedForTheOngoingRetry`).
 */
export interface DestinationLeaderRanOn {
  readonly leader: number;
  readonly leaderEpoch: number;
}

/** The Kafka errors a destination leader replica answers a step with when it no longer leads it. */
export type DestinationLeaderMovedName =
  | "LEADER_NOT_AVAILABLE"
  | "NOT_LEADER_OR_FOLLOWER"
  | "FENCED_LEADER_EPOCH";

const LEADER_MOVED: ReadonlySet<string> = new Set<DestinationLeaderMovedName>([
  "LEADER_NOT_AVAILABLE",
  "NOT_LEADER_OR_FOLLOWER",
  "FENCED_LEADER_EPOCH",
]);

/**
 * LEADER_NOT_AVAILABLE (retriable) for a destination partition with no running leader to run a step on:
 * none elected, or the broker the metadata still names leader is not running (it crashed while no controller
 * was there to fence it and elect another). Also, under the replica's own name (NOT_LEADER_OR_FOLLOWER,
 * FENCED_LEADER_EPOCH), for a leader that stopped leading in the middle of the step (it crashed while the
 * step waited for its in-sync replicas; `leaderMovedOnDestination`). Told apart from the same errors from the
 * source (its partition's leader gone or moved), which no destination election ends: a FAILED partition
 * that failed with this retries as soon as a running broker is elected leader of its destination
 * partition, not when its backoff ends (`EffectExecutor.retryNow`), as Kafka re-drives a partition's state
 * at the LeaderAndIsr / metadata change (ReplicaManager.applyDelta), not on a timer.
 */
export class NoDestinationLeaderError extends ClusterError {
  /**
   * The leader that refused the step (its replica's own answer), or the leader the metadata names whose
   * broker was down as the step looked for it (the same broker back at the same epoch is no new leader):
   * undefined when the step found no leader elected, or one whose running broker does not lead yet (a
   * lagging replica), which any running leader ends.
   */
  readonly ranOn: DestinationLeaderRanOn | undefined;

  constructor(
    message: string,
    errorName: DestinationLeaderMovedName = "LEADER_NOT_AVAILABLE",
    options?: ErrorOptions & { ranOn?: DestinationLeaderRanOn },
  ) {
    super(errorName, message, options);
    this.ranOn = options?.ranOn;
  }
}

/**
 * `error`, thrown by a destination leader replica (the leader `ranOn`), as a {@link NoDestinationLeaderError}
 * (same name and message, `error` as its cause) when it says that replica no longer leads; any other error
 * as it is.
 */
export function leaderMovedOnDestination(error: unknown, ranOn?: DestinationLeaderRanOn): unknown {
  if (error instanceof NoDestinationLeaderError || !(error instanceof Error)) return error;
  const name = (error as { errorName?: unknown }).errorName;
  if (typeof name !== "string" || !LEADER_MOVED.has(name)) return error;
  return new NoDestinationLeaderError(error.message, name as DestinationLeaderMovedName, {
    cause: error,
    ...(ranOn === undefined ? {} : { ranOn }),
  });
}
