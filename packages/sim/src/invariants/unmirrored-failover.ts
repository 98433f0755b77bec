import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { MirrorPartitionView, PartitionTransition } from "@cluster-mirror/mirror";
import { ControlRecordType } from "@cluster-mirror/protocol";
import { type FailoverAlignment, failoverAlignment } from "./alignment";
import { leaderLog } from "./logs";
import type { Violation } from "./violation";

/**
 * Whether a failover must leave the producer state alone (issue 11 item 5b): it started from FAILED or
 * PREPARING (or a STOPPING that failed was retried from FAILED: the engine decides per STOPPING entry; soak
 * `active-passive` FC_SEED=13 x100, a new topic failed over from PREPARING whose STOPPING failed in a leader
 * bounce), and the `__mirror_state` history shows the log never became a copy of the source in that session
 * (no PREPARING truncation since the session started: a loop refused in PREPARING, a re-add or failback
 * that failed or was removed before truncating, a topic that failed again after STOPPED; nor a cut the
 * engine learnt of without its tombstone, `FailoverAlignment.cutInPreparing`). Its log is the
 * topic's own: ABORT markers would abort its live transactions (a local transaction then committed would
 * read as aborted) and a MIRROR_PID_RESET would fail its live idempotent producers, so STOPPING records the
 * LME and bumps the epoch only.
 */
export function failoverWithoutMirroredData(alignment: FailoverAlignment | undefined): boolean {
  return (
    alignment !== undefined &&
    !alignment.aligned &&
    !alignment.cutInPreparing &&
    (alignment.resumedFrom === "FAILED" || alignment.resumedFrom === "PREPARING")
  );
}

/** States a failover over the topic's own log (see `failoverWithoutMirroredData`) may start from. */
const UNMIRRORED_FAILOVER_FROM: ReadonlySet<string> = new Set(["FAILED", "PREPARING"]);

/**
 * Watches one cluster's committed transitions (`ClusterMirroring.subscribeTransitions`, synchronously, as
 * they commit) for failovers without mirrored data (see `failoverWithoutMirroredData`): when such a
 * STOPPING commits, it notes the partition leader's log end; when its STOPPED commits, no MIRROR_PID_RESET
 * may lie at or above it. STOPPING writes its ABORT markers and that barrier together, so the barrier is
 * the one to look for (an ABORT there may be an application's own, after an earlier STOPPED).
 */
export class UnmirroredFailoverWatch {
  /** Log end of the data partition when its unmirrored STOPPING committed, by `mirror/topicId/partition`. */
  private readonly started = new Map<string, bigint>();

  /** `cluster`: the node's current process (a node restart replaces it; a failover may span the restart). */
  constructor(
    private readonly label: string,
    private readonly currentCluster: () => KafkaCluster,
  ) {}

  private get cluster(): KafkaCluster {
    return this.currentCluster();
  }

  /** Checks one committed transition; returns the violations it shows. */
  onTransition(t: PartitionTransition): Violation[] {
    const { key, record } = t;
    const id = `${key.mirror}/${key.topicId}/${key.partition}`;
    if (
      record.state === "STOPPING" &&
      UNMIRRORED_FAILOVER_FROM.has(t.previous.state) &&
      !this.started.has(id)
    ) {
      const alignment = failoverAlignment(this.cluster, key);
      if (!failoverWithoutMirroredData(alignment)) return [];
      const log = leaderLog(this.cluster, key.topic, key.partition);
      // A log with no batch above the LME was cut to it (the engine reads the same as it fails over).
      if (log && alignment!.lmeBefore >= 0 && (log.lastWrittenEpoch ?? -1) <= alignment!.lmeBefore) return [];
      if (log) this.started.set(id, log.logEndOffset);
      return [];
    }
    const from = this.started.get(id);
    if (from === undefined || record.state === "STOPPING" || record.state === "FAILED") return [];
    this.started.delete(id);
    if (record.state !== "STOPPED") return [];
    const log = leaderLog(this.cluster, key.topic, key.partition);
    const barrier = log
      ? [...log.batches()].find(
          (b) => b.baseOffset >= from && b.isControl && b.controlType === ControlRecordType.MIRROR_PID_RESET,
        )
      : undefined;
    if (!barrier) return [];
    return [
      {
        invariant: "failover-no-markers",
        message: `${this.label} ${key.mirror} ${key.topic}-${key.partition}: failed over from FAILED or PREPARING before its log held mirrored data (log end ${from} when STOPPING committed), yet STOPPING appended a MIRROR_PID_RESET at offset ${barrier.baseOffset}: it resets the producer state of the topic's own live producers`,
      },
    ];
  }
}

/**
 * The STOPPED check of a failover asked while FAILED, or while PREPARING before its truncation, without
 * mirrored data (its markers are checked by `UnmirroredFailoverWatch`): no barrier is expected, and the
 * leader epoch is above the LME. One from PREPARING keeps the LME recorded before it (spec §4 STOPPING step
 * 2: the log's own batches are not mirrored ones; ENGINE BUG 3 captured their epoch).
 */
export function checkFailoverWithoutMirroredData(
  label: string,
  cluster: KafkaCluster,
  view: MirrorPartitionView,
  alignment?: FailoverAlignment,
): Violation[] {
  const out: Violation[] = [];
  const where = `${label} ${view.key.topic}-${view.key.partition}`;
  if (alignment?.stoppedFrom === "PREPARING" && view.lastMirrorEpoch !== alignment.lmeBefore) {
    out.push({
      invariant: "failover-lme",
      message: `${where}: failover from PREPARING before the log was aligned with the source: LME persisted ${view.lastMirrorEpoch}, expected the earlier LME ${alignment.lmeBefore}`,
    });
  }
  const meta = cluster.controller.image.partition(view.key.topic, view.key.partition);
  if (!meta || meta.leaderEpoch > view.lastMirrorEpoch) return out;
  out.push({
    invariant: "failover-epoch-bump",
    message: `${where}: leader epoch ${meta.leaderEpoch} is not above the LME ${view.lastMirrorEpoch}`,
  });
  return out;
}
