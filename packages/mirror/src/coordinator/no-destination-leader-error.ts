import { ClusterError } from "@cluster-mirror/cluster";

/**
 * LEADER_NOT_AVAILABLE (retriable) for a destination partition with no running leader to run a step on: none
 * elected, or the broker the metadata still names leader is not running (it crashed while no controller was
 * there to fence it and elect another). Told apart from LEADER_NOT_AVAILABLE from the source (its
 * partition's leader gone), which no destination election ends: a FAILED partition that failed with this
 * retries as soon as a running broker is elected leader of its destination partition, not when its backoff
 * ends (`EffectExecutor.retryNow`).
 */
export class NoDestinationLeaderError extends ClusterError {
  constructor(message: string) {
    super("LEADER_NOT_AVAILABLE", message);
  }
}
