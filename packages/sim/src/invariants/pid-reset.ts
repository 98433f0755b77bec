import type { KafkaCluster } from "@cluster-mirror/cluster";
import { ControlRecordType } from "@cluster-mirror/protocol";
import type { Violation } from "./violation";

/**
 * Every replica answers `endsWithPidReset()` from what it stores: true exactly when its last batch is a
 * MIRROR_PID_RESET control batch. A failover that resumes half way through (spec §4 STOPPING, "every step
 * is idempotent") asks the leader this to decide whether to write the barrier, and any replica may be that
 * leader next: a wrong answer skips the barrier (producer state from the source survives into the new
 * primary) or writes a second one. Checked on every running replica of every topic the workload created,
 * after every step, so an answer that goes stale (an append path that forgets to track the last batch's
 * type, a recovery that rebuilds it wrongly) is caught before any failover depends on it.
 */
export function checkPidResetAnswers(
  label: string,
  cluster: KafkaCluster,
  topics: Iterable<string>,
): Violation[] {
  const out: Violation[] = [];
  for (const topic of topics) {
    const partitions = cluster.controller.image.topic(topic)?.partitions.length ?? 0;
    for (const id of cluster.runningBrokers()) {
      for (let p = 0; p < partitions; p++) {
        const log = cluster.broker(id)?.replica(topic, p)?.log;
        if (!log) continue;
        let last: { baseOffset: bigint; isControl: boolean; controlType?: number } | undefined;
        for (const b of log.batches()) last = b;
        const stored = last?.isControl === true && last.controlType === ControlRecordType.MIRROR_PID_RESET;
        const answer = log.endsWithPidReset();
        if (stored === answer) continue;
        out.push({
          invariant: "pid-reset-answer",
          message: `${label} broker ${id} ${topic}-${p}: endsWithPidReset() answers ${answer} but the last batch stored (${last ? `offset ${last.baseOffset}, ${last.isControl ? `control type ${last.controlType}` : "data"}` : "none"}) ${stored ? "is" : "is not"} a MIRROR_PID_RESET: a resumed failover would ${answer ? "skip its barrier" : "write a second barrier"}`,
        });
      }
    }
  }
  return out;
}
