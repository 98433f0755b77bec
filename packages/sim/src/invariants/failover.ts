import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { MirrorPartitionView } from "@cluster-mirror/mirror";
import { ControlRecordType } from "@cluster-mirror/protocol";
import { ALIGNED_STATES, failoverAlignment } from "./alignment";
import { leaderLog } from "./logs";
import type { Violation } from "./violation";

/** Where STOPPING's local writes begin and where its barrier is, as read from the log. */
export interface FailoverPoint {
  mirroredEnd: bigint;
  barrierOffset: bigint;
  highWatermark: bigint;
}

/**
 * The failover invariants (spec §4 "STOPPING"), checked on the new primary right after a partition reached
 * STOPPED and before anything writes to it:
 * - the log ends with exactly one MIRROR_PID_RESET barrier (control type 7) after the last mirrored batch,
 *   preceded only by ABORT markers that STOPPING wrote (epoch above the LME);
 * - the LME persisted equals the highest epoch among the mirrored batches (those before STOPPING's writes);
 *   for a failover that started before PREPARING aligned the log (see `failoverAlignment`), the LME recorded
 *   before it, unchanged;
 * - the partition leader epoch is above the LME;
 * - no transaction is open in the producer state.
 * Returns the failover point (for later checks) and the violations.
 */
export function checkFailover(
  label: string,
  cluster: KafkaCluster,
  view: MirrorPartitionView,
): { point: FailoverPoint | undefined; violations: Violation[] } {
  const { topic, partition } = view.key;
  const where = `${label} ${topic}-${partition}`;
  const log = leaderLog(cluster, topic, partition);
  const meta = cluster.controller.image.partition(topic, partition);
  if (!log || !meta) return { point: undefined, violations: [] };
  const out: Violation[] = [];
  const batches = [...log.batches()];
  const lme = view.lastMirrorEpoch;
  const last = batches[batches.length - 1];
  if (!last?.isControl || last.controlType !== ControlRecordType.MIRROR_PID_RESET) {
    out.push({
      invariant: "failover-barrier",
      message: `${where}: STOPPED but the log does not end with a MIRROR_PID_RESET barrier (last batch: ${last ? `offset ${last.baseOffset} control=${last.isControl} type=${last.controlType}` : "none"})`,
    });
    return { point: undefined, violations: out };
  }
  // STOPPING's own writes: the control batches at the end above the LME (ABORT markers, the barrier).
  let i = batches.length - 1;
  let barriers = 1;
  while (i > 0) {
    const b = batches[i - 1]!;
    const stopping =
      b.isControl &&
      b.partitionLeaderEpoch > lme &&
      (b.controlType === ControlRecordType.ABORT || b.controlType === ControlRecordType.MIRROR_PID_RESET);
    if (!stopping) break;
    if (b.controlType === ControlRecordType.MIRROR_PID_RESET) barriers++;
    i--;
  }
  if (barriers > 1) {
    // Spec §4 STOPPING: a coordinator that resumes half way through does not duplicate markers.
    out.push({
      invariant: "failover-barrier",
      message: `${where}: STOPPING wrote ${barriers} MIRROR_PID_RESET barriers after the last mirrored batch (from offset ${batches[i]!.baseOffset}), expected exactly one`,
    });
  }
  const mirroredEnd = batches[i]!.baseOffset;
  let mirroredMax = -1;
  for (const b of batches.slice(0, i)) mirroredMax = Math.max(mirroredMax, b.partitionLeaderEpoch);
  // The batches below mirroredEnd are mirrored ones only if the log was a copy of the source when the
  // failover started. A failover before PREPARING's truncation (a failback stopped early) leaves the topic's
  // own log: its epochs are local, and the LME must stay the one recorded before (spec §4 STOPPING step 2).
  const alignment = failoverAlignment(cluster, view.key);
  // A cut the engine learnt PREPARING made though its tombstone failed (`cutInPreparing`: soak min-insync
  // FC_SEED=541, a full disk refused the tombstone): the log is a copy of the source then, and the engine
  // may record its latest epoch, as from an aligned state.
  const cutKnown = alignment?.cutInPreparing === true && lme === mirroredMax;
  if (alignment && !alignment.aligned && !cutKnown) {
    if (lme !== alignment.lmeBefore) {
      out.push({
        invariant: "failover-lme",
        message: `${where}: failover from ${alignment.stoppedFrom} before the log was aligned with the source: LME persisted ${lme}, expected the earlier LME ${alignment.lmeBefore} (the log's own batches below offset ${mirroredEnd} reach epoch ${mirroredMax})`,
      });
    }
  } else if (mirroredMax !== lme && batches.slice(0, i).length > 0) {
    // From PREPARING or FAILED the engine may not know whether the log was aligned (after a coordinator
    // restart it assumes not, the safe side) and keep the earlier LME instead.
    const unsure = alignment !== undefined && !ALIGNED_STATES.has(alignment.stoppedFrom ?? "");
    if (!unsure || lme !== alignment.lmeBefore) {
      out.push({
        invariant: "failover-lme",
        message: `${where}: LME persisted ${lme} but the highest epoch among the mirrored batches (below offset ${mirroredEnd}) is ${mirroredMax}`,
      });
    }
  }
  if (meta.leaderEpoch <= lme) {
    out.push({
      invariant: "failover-epoch-bump",
      message: `${where}: leader epoch ${meta.leaderEpoch} is not above the LME ${lme}`,
    });
  }
  const open = log.ongoingTransactions();
  if (open.length > 0) {
    out.push({
      invariant: "failover-no-open-txn",
      message: `${where}: ${open.length} transaction(s) still open after STOPPED (first at offset ${open[0]!.firstOffset}, producer ${open[0]!.producerId})`,
    });
  }
  return {
    point: { mirroredEnd, barrierOffset: last.baseOffset, highWatermark: log.highWatermark },
    violations: out,
  };
}

/**
 * What an unclean election on the new primary cannot excuse: a failover partition whose log end the
 * election lost (so what it promised of the source is not checked, `checkFailover`) still becomes writable
 * with its own barrier last (a MIRROR_PID_RESET above the LME) and no transaction open. The engine writes
 * them again on a leader elected without them, in STOPPING or at STOPPED's step; Kafka's transaction
 * coordinator would leave such a transaction hanging, but no coordinator of this cluster runs the source's.
 */
export function checkBarrierAfterElection(
  label: string,
  cluster: KafkaCluster,
  view: MirrorPartitionView,
): Violation[] {
  const { topic, partition } = view.key;
  const log = leaderLog(cluster, topic, partition);
  if (!log) return [];
  const where = `${label} ${topic}-${partition}`;
  const last = [...log.batches()].at(-1);
  const out: Violation[] = [];
  if (
    !last?.isControl ||
    last.controlType !== ControlRecordType.MIRROR_PID_RESET ||
    last.partitionLeaderEpoch <= view.lastMirrorEpoch
  ) {
    out.push({
      invariant: "failover-barrier",
      message: `${where}: STOPPED after an unclean election lost its log end, but the log does not end with the failover's MIRROR_PID_RESET above the LME ${view.lastMirrorEpoch} (last batch: ${last ? `offset ${last.baseOffset} epoch ${last.partitionLeaderEpoch} control=${last.isControl} type=${last.controlType}` : "none"})`,
    });
  }
  const open = log.ongoingTransactions();
  if (open.length > 0) {
    out.push({
      invariant: "failover-no-open-txn",
      message: `${where}: ${open.length} transaction(s) still open after STOPPED and an unclean election (first at offset ${open[0]!.firstOffset}, producer ${open[0]!.producerId})`,
    });
  }
  return out;
}

/**
 * After failover, once replication settled: LSO == HW (no hanging transaction) on the new primary. `live`
 * excuses an open transaction its cluster's own coordinator still runs, and which a later check ends (a
 * failover over the topic's own log leaves those alone: KIP-664's hanging ones only are aborted).
 */
export function checkNoHangingTransaction(
  label: string,
  cluster: KafkaCluster,
  topic: string,
  partition: number,
  live: (open: { producerId: bigint; firstOffset: bigint }) => boolean = () => false,
): Violation[] {
  const log = leaderLog(cluster, topic, partition);
  if (!log || log.lastStableOffset === log.highWatermark) return [];
  const open = log.ongoingTransactions();
  const hanging = open.filter((t) => !live(t));
  if (open.length > 0 && hanging.length === 0) return [];
  const first = hanging[0];
  return [
    {
      invariant: "failover-lso",
      message: `${label} ${topic}-${partition}: LSO ${log.lastStableOffset} != HW ${log.highWatermark} after failover (a transaction hangs${first ? `: producer ${first.producerId} from offset ${first.firstOffset}` : ""})`,
    },
  ];
}
