import type { DestinationCluster, MirrorPartitionKey } from "../ports";
import type { DestinationLeaderRanOn } from "./no-destination-leader-error";

/**
 * The destination leader that refused a step (it said it no longer leads: NoDestinationLeaderError's
 * `ranOn`), as the FAILED that step failed waits it out. `lagged`: that leader was running and its own
 * replica named an older leader epoch than the metadata's (a broker whose owed truncation failed on a full
 * disk applies no change of the partition, and refuses every step with FENCED_LEADER_EPOCH): the wait also
 * ends once it knows the metadata's epoch.
 */
export interface RefusingLeader extends DestinationLeaderRanOn {
  readonly lagged: boolean;
}

/** `ranOn`, the leader that refused a step of `key`'s partition, as the step fails now. */
export function refusingLeader(
  destination: DestinationCluster,
  key: MirrorPartitionKey,
  ranOn: DestinationLeaderRanOn,
): RefusingLeader {
  const own = ownLeaderEpoch(destination, ranOn.leader, key);
  const lagged = own >= 0 && own < destination.leaderEpochOf(key.topic, key.partition);
  return { ...ranOn, lagged };
}

/**
 * Whether what a FAILED waits for on `key`'s destination partition changed since `refused` refused its
 * step: another leader, or a newer leader epoch in the metadata (Kafka's producer skips its retry backoff
 * only then, KIP-951 `ProducerBatch.hasLeaderChangedForTheOngoingRetry`), or a leader that lagged the
 * metadata's epoch knows it now (its owed cut made). Not the same leader back at the same epoch after a
 * crash while no controller ran: the retried step (a failover's leader epoch bump, PREPARING's truncation)
 * needs the controller, waited for it in place for 60 s and failed again on NOT_CONTROLLER, which nothing
 * brings forward, while the controller's return fences that broker and elects (a newer epoch), which does.
 * A leader whose broker was down as the step looked for it counts as one that refused it (its broker back
 * at the same epoch is the same leader). True with no `refused` (no leader elected, or one whose running
 * broker does not lead yet: any running leader ends the wait).
 */
export function leaderChangedSince(
  destination: DestinationCluster,
  key: MirrorPartitionKey,
  refused: RefusingLeader | undefined,
): boolean {
  if (refused === undefined) return true;
  const leader = destination.leaderOf(key.topic, key.partition);
  const leaderEpoch = destination.leaderEpochOf(key.topic, key.partition);
  if (leader !== refused.leader || leaderEpoch > refused.leaderEpoch) return true;
  return refused.lagged && ownLeaderEpoch(destination, leader, key) >= leaderEpoch;
}

/** The leader epoch `leader`'s own replica of `key`'s partition knows, or -1 when it does not lead it now. */
function ownLeaderEpoch(destination: DestinationCluster, leader: number, key: MirrorPartitionKey): number {
  if (leader < 0) return -1;
  try {
    return destination.replica(leader, key.topic, key.partition)?.leaderEpoch() ?? -1;
  } catch {
    // It stopped leading (or its broker running) since it was looked up.
    return -1;
  }
}
