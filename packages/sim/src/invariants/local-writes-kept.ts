import type { KafkaCluster } from "@cluster-mirror/cluster";
import { ControlRecordType } from "@cluster-mirror/protocol";
import type { FailoverRecord } from "../model";
import { leaderLog } from "./logs";
import type { Violation } from "./violation";

/**
 * Above a failover's MIRROR_PID_RESET barrier a failed-over partition's log is the topic's own: once a
 * local producer's data batch is there, no MIRROR_PID_RESET may follow it. A second barrier wipes the
 * local producers' state (their next batch is taken for a new producer's, a retry is written twice) and
 * comes with ABORT markers over their open transactions: only a log that lost the failover's barrier
 * (nothing local above the LME) gets it again (`EffectExecutor.rewriteLostBarrier`). Checked on `node`'s
 * leader of every failover's partition, below where its log became another source's copy again (a cut,
 * `rewrittenFrom`, or a mirror's append, `mirroredAgainFrom`: a re-add or failback of this node).
 */
export function checkNoBarrierOverLocalWrites(
  node: string,
  cluster: KafkaCluster,
  failovers: readonly FailoverRecord[],
): Violation[] {
  const out: Violation[] = [];
  for (const f of failovers) {
    if (f.node !== node) continue;
    const log = leaderLog(cluster, f.topic, f.partition);
    if (!log) continue;
    const ends = [f.rewrittenFrom, f.mirroredAgainFrom].filter((x): x is bigint => x !== undefined);
    const end = ends.reduce((a, b) => (b < a ? b : a), log.logEndOffset);
    let localData: bigint | undefined;
    for (const b of log.batches()) {
      if (b.baseOffset <= f.barrierOffset) continue;
      if (b.baseOffset >= end) break;
      if (!b.isControl) {
        localData ??= b.baseOffset;
        continue;
      }
      if (localData === undefined || b.controlType !== ControlRecordType.MIRROR_PID_RESET) continue;
      out.push({
        invariant: "no-barrier-over-local-writes",
        message: `${node} ${f.topic}-${f.partition}: a MIRROR_PID_RESET at ${b.baseOffset} follows the local producers' data at ${localData}, above the ${f.mirror} failover's barrier at ${f.barrierOffset}: it wipes their producer state (and the failover's steps abort their open transactions), though nothing lost the barrier`,
      });
      break;
    }
  }
  return out;
}
