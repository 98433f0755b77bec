import type { KafkaCluster } from "@cluster-mirror/cluster";
import { keyIdOf, readMirrorStateHistory } from "./mirror-state-history";

/** States whose log is a copy of the source (PREPARING's truncation completed before them). */
export const ALIGNED_STATES: ReadonlySet<string> = new Set([
  "MIRRORING",
  "EPOCH_FENCING",
  "PAUSING",
  "PAUSED",
]);

/** What `__mirror_state` says about a partition when its latest failover started. */
export interface FailoverAlignment {
  /**
   * Whether the log was a copy of the source: PREPARING's truncation completed (its LastMirrorEpochs
   * tombstone) since the mirroring session started, and no LME was captured since. A failback's PREPARING
   * that was stopped before its truncation is not aligned: the log is still the topic's own.
   */
  aligned: boolean;
  /** The LastMirrorEpochs value in force when the failover started (-1: none). */
  lmeBefore: number;
  /** The state the failover (the first STOPPING record) came from. */
  stoppedFrom: string | null;
  /**
   * The state the latest STOPPING record of that failover came from: FAILED when a STOPPING that failed was
   * retried (STOPPING -> FAILED -> STOPPING), else `stoppedFrom`. The engine decides on markers per entry.
   */
  resumedFrom: string | null;
  /**
   * The failover came from PREPARING after the engine learnt that PREPARING's truncation cut the log, though
   * no tombstone says so (the tombstone failed, or the coordinator was lost before it was durable and the
   * new one saw the cut in the log): the STOPPING record's leaderEpoch is >= 0 where the PREPARING record's,
   * a new episode's, was -1, also when PREPARING failed after its cut (FAILED carries the epoch on) and the
   * failover came from FAILED. The log holds the source's producer state: the failover writes its markers.
   */
  cutInPreparing: boolean;
}

/**
 * Replays the history of one key (`mirror/topicId/partition`) in the destination's `__mirror_state`, read
 * independently of the engine, and returns the alignment at the start of its latest failover (undefined:
 * no failover recorded, or the history is not complete). Rules:
 * - a PREPARING record starts a session: not aligned, unless it retries a FAILED one that was aligned;
 * - a LastMirrorEpochs tombstone (written when PREPARING's truncation completed) makes it aligned;
 * - a LastMirrorEpochs value (an LME captured by STOPPING, which appends locally next) or STOPPED ends it.
 */
export function failoverAlignment(
  cluster: KafkaCluster,
  key: { mirror: string; topicId: string; partition: number },
): FailoverAlignment | undefined {
  const history = readMirrorStateHistory(cluster);
  if (history.incomplete.length > 0) return undefined;
  const id = keyIdOf(key.mirror, key.topicId, key.partition);
  let aligned = false;
  let lme = -1;
  let inFailover = false;
  let found: FailoverAlignment | undefined;
  // The leaderEpoch of the PREPARING record that began the latest session (-1: a new episode on the topic's
  // own log).
  let preparingEpoch = -1;
  for (const e of history.entries) {
    if (e.keyId !== id) continue;
    if (e.kind === "LastMirrorEpochs") {
      aligned = e.lastMirrorEpoch === null;
      lme = e.lastMirrorEpoch ?? -1;
      continue;
    }
    const s = e.state;
    if (s === null) {
      aligned = false;
      inFailover = false;
      continue;
    }
    if (s.state === "PREPARING") {
      // A retry of a FAILED one goes on with its session (and the epoch that session began with).
      if (s.previousState !== "FAILED") preparingEpoch = s.leaderEpoch;
      aligned = s.previousState === "FAILED" && aligned;
      inFailover = false;
    } else if (s.state === "STOPPED") {
      aligned = false;
      inFailover = false;
    } else if (s.state === "STOPPING" && !inFailover) {
      // From PREPARING, or from a FAILED that PREPARING failed into after its cut (its tombstone's write
      // failed: readd-cut-fault FC_SEED=5, the leaderEpoch the FAILED and STOPPING records carry is >= 0).
      const cutInPreparing =
        (s.previousState === "PREPARING" || s.previousState === "FAILED") &&
        preparingEpoch < 0 &&
        s.leaderEpoch >= 0;
      found = {
        aligned,
        lmeBefore: lme,
        stoppedFrom: s.previousState,
        resumedFrom: s.previousState,
        cutInPreparing,
      };
      inFailover = true;
    } else if (s.state === "STOPPING" && found) {
      found.resumedFrom = s.previousState;
    }
  }
  return found;
}

/** `from->to` of a sim edge label, and the mirror name the sim gives that edge (`to-from-from`). */
export function mirrorOfLabel(label: string): string | undefined {
  const m = /^(\S+)->(\S+)/.exec(label);
  return m ? `${m[2]}-from-${m[1]}` : undefined;
}
