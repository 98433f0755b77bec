import type { PartitionLog } from "@cluster-mirror/log";
import type { Controller } from "./controller";
import type { PendingTruncation } from "./metadata-image";
import type { Cancel, Scheduler } from "./scheduler";

/** The replica a truncation is owed by, as the broker knows it. */
export interface TruncatingReplica {
  topic: string;
  partition: number;
  /** The broker's key of the partition (topic id and index). */
  key: string;
  log: PartitionLog;
}

/**
 * KIP-1279 truncations this broker's replicas owe (`ReplicaTruncationRecord`): when a mirror truncates a
 * leader's log, every other replica must cut its own log the same way before it next fetches or leads, even
 * one that was down or outside the ISR then. Otherwise a replica could keep batches the leader dropped,
 * while the leader stores the source's batches at the same offsets, of the same epochs: KIP-320's
 * epoch check sees no divergence and the replica rejoins the ISR with other content.
 *
 * Each record is applied once (tracked in memory by its metadata offset) and then reported to the
 * controller, which clears it. A report the controller cannot hear is sent again until it lands; a broker
 * that restarts before then truncates again, dropping only what it fetched since, which it fetches again.
 */
export class OwedTruncations {
  private readonly applied = new Set<string>();
  private readonly retrying = new Map<string, Cancel>();

  constructor(
    private readonly brokerId: number,
    private readonly controller: Controller,
    private readonly scheduler: Scheduler,
    private readonly retryMs: number,
  ) {}

  /**
   * Cuts the replica's log as `owed` says, once per record. True when the log changed. A cut that throws (a
   * full disk: `KafkaStorageError`) is not applied: it is tried again on the next call, and never reported.
   */
  apply(replica: TruncatingReplica, owed: PendingTruncation): boolean {
    const id = `${replica.key}@${owed.id}`;
    if (this.applied.has(id)) return false;
    const changed = cut(replica.log, owed);
    this.applied.add(id);
    return changed;
  }

  /**
   * Tells the controller the replica applied `owed`: now, or from a scheduled task when `defer` (the caller
   * is inside the controller's delivery of a record). While the controller cannot hear it (it is failing
   * over), asks again every `retryMs` for as long as `stillOwed()` holds; one retry chain per record.
   */
  report(
    replica: TruncatingReplica,
    owed: PendingTruncation,
    stillOwed: () => boolean,
    defer: boolean,
  ): void {
    const id = `${replica.key}@${owed.id}`;
    if (this.retrying.has(id)) return;
    const attempt = (): void => {
      this.retrying.delete(id);
      if (!stillOwed()) return;
      try {
        this.controller.completeReplicaTruncation(replica.topic, replica.partition, this.brokerId, owed.id);
      } catch {
        this.retrying.set(id, this.scheduler.schedule(attempt, this.retryMs));
      }
    };
    if (defer) this.retrying.set(id, this.scheduler.schedule(attempt, 0));
    else attempt();
  }

  /** Forgets what was applied and stops retrying (the broker stopped: its next start learns from the feed). */
  clear(): void {
    this.applied.clear();
    for (const cancel of this.retrying.values()) cancel();
    this.retrying.clear();
  }
}

/** Cuts `log` as `owed` says; true when the log changed. */
function cut(log: PartitionLog, owed: PendingTruncation): boolean {
  if (owed.full) {
    if (log.logEndOffset === log.logStartOffset && log.logStartOffset === owed.offset) return false;
    log.truncateFullyAndStartAt(owed.offset);
    return true;
  }
  if (log.logEndOffset <= owed.offset) return false;
  log.truncateTo(owed.offset);
  return true;
}
