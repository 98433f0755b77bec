import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { AckedWrite } from "../model";
import { batchesByOffset, hexOf, leaderLog } from "./logs";
import type { Violation } from "./violation";

/**
 * No acknowledged loss across failover and failback: every write a failover promised (acknowledged on the
 * old primary before a planned failover's catch-up barrier, or below the destination high watermark at
 * failover) is still in `cluster`'s log at the same offset, byte for byte.
 * Checked on the new primary, and on the old primary once it mirrors back from it. Writes below the log
 * start (retention) are not checked.
 */
export function checkPromisedWrites(
  label: string,
  cluster: KafkaCluster,
  promised: readonly AckedWrite[],
): Violation[] {
  const out: Violation[] = [];
  const byPartition = new Map<string, AckedWrite[]>();
  for (const w of promised) {
    const k = `${w.topic}\0${w.partition}`;
    byPartition.set(k, [...(byPartition.get(k) ?? []), w]);
  }
  for (const writes of byPartition.values()) {
    const first = writes[0]!;
    const log = leaderLog(cluster, first.topic, first.partition);
    if (!log) continue;
    const batches = batchesByOffset(log);
    for (const w of writes) {
      if (w.offset < log.logStartOffset) continue;
      const b = batches.get(w.offset);
      if (!b || hexOf(b) !== w.hex) {
        out.push({
          invariant: "acked-durability",
          message: `${label} ${w.topic}-${w.partition}: write acknowledged on ${w.node} at offset ${w.offset} (promised by the failover) is ${b ? "different" : "missing"} (log ${log.logStartOffset}..${log.logEndOffset})`,
        });
        if (out.length >= 3) return out;
      }
    }
  }
  return out;
}

/**
 * The writes of `writes` (one partition of `cluster`) that the partition still holds as acknowledged: the
 * batch at their offset is theirs, byte for byte. A write whose offset is now in the log range with another
 * batch or none was dropped (a consented `--truncate-local-writes`, then maybe overwritten), so no later
 * failover can promise it. Writes below the log start (retention) are kept, and so is everything when the
 * partition has no running leader: nothing there says the write is gone.
 */
export function stillAcknowledged(cluster: KafkaCluster, writes: readonly AckedWrite[]): AckedWrite[] {
  const first = writes[0];
  if (!first) return [];
  const log = leaderLog(cluster, first.topic, first.partition);
  if (!log) return [...writes];
  const batches = batchesByOffset(log);
  return writes.filter((w) => {
    if (w.offset < log.logStartOffset) return true;
    const b = batches.get(w.offset);
    return b !== undefined && hexOf(b) === w.hex;
  });
}
