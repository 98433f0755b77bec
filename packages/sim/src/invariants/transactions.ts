import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { PartitionLog } from "@cluster-mirror/log";
import { ControlRecordType } from "@cluster-mirror/protocol";
import type { CommittedTxn } from "../model";
import { leaderLog } from "./logs";
import type { Violation } from "./violation";

/** How a transaction's data batch at `offset` (producer `producerId`) reads in `cluster`'s log now. */
export function transactionOutcome(
  cluster: KafkaCluster,
  topic: string,
  partition: number,
  producerId: bigint,
  offset: bigint,
): "COMMITTED" | "ABORTED" | "OPEN" | "MISSING" | "BELOW_LOG_START" | "OFFLINE" {
  const log = leaderLog(cluster, topic, partition);
  if (!log) return "OFFLINE";
  if (offset < log.logStartOffset) return "BELOW_LOG_START";
  let found = false;
  for (const b of log.batches()) {
    if (!found) {
      if (b.baseOffset === offset && b.producerId === producerId && !b.isControl) found = true;
      else if (b.baseOffset > offset) return "MISSING";
      continue;
    }
    if (!b.isControl || b.producerId !== producerId) continue;
    return b.controlType === ControlRecordType.COMMIT ? "COMMITTED" : "ABORTED";
  }
  return found ? "OPEN" : "MISSING";
}

/** Offset of the marker that ends the transaction whose data batch is at `offset`, if the log holds both. */
export function transactionMarkerOffset(
  log: PartitionLog,
  producerId: bigint,
  offset: bigint,
): bigint | undefined {
  let found = false;
  for (const b of log.batches()) {
    if (!found) {
      if (b.baseOffset === offset && b.producerId === producerId && !b.isControl) found = true;
      else if (b.baseOffset > offset) return undefined;
      continue;
    }
    if (b.isControl && b.producerId === producerId) return b.baseOffset;
  }
  return undefined;
}

/**
 * A committed transaction never reads as aborted: on `cluster`, each of `commits` (transactions whose
 * COMMIT was decided on their source) has its data batch at the same offset followed by a COMMIT marker,
 * not an ABORT, and is not left open. Offsets below the log start (retention) are not checked.
 */
export function checkCommittedTxns(
  label: string,
  cluster: KafkaCluster,
  commits: readonly CommittedTxn[],
): Violation[] {
  const out: Violation[] = [];
  for (const c of commits) {
    const outcome = transactionOutcome(cluster, c.topic, c.partition, c.producerId, c.offset);
    if (outcome === "COMMITTED" || outcome === "BELOW_LOG_START" || outcome === "OFFLINE") continue;
    out.push({
      invariant: "txn-committed",
      message: `${label} ${c.topic}-${c.partition}: the transaction of producer ${c.producerId} committed on ${c.node} (data at offset ${c.offset}) ${outcome === "ABORTED" ? "reads as aborted" : outcome === "OPEN" ? "is still open" : "is missing"}`,
    });
    if (out.length >= 3) break;
  }
  return out;
}

/** Whether a COMMIT marker for `c` sits below the high watermark of its own partition on `cluster`. */
export function commitMarkerCommitted(cluster: KafkaCluster, c: CommittedTxn): boolean {
  const log = leaderLog(cluster, c.topic, c.partition);
  if (!log) return false;
  let found = false;
  for (const b of log.batches()) {
    if (b.baseOffset === c.offset && b.producerId === c.producerId) found = true;
    if (!found || !b.isControl || b.producerId !== c.producerId) continue;
    return b.controlType === ControlRecordType.COMMIT && b.lastOffset < log.highWatermark;
  }
  return false;
}
