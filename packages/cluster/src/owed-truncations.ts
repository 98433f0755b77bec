import type { PartitionLog } from "@cluster-mirror/log";
import type { Controller } from "./controller";
import type { DataDir } from "./data-dir";
import { cutsAfter, type PendingTruncation, type ReplicaCut } from "./pending-truncation";
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
 * leader's log, every replica must cut its own log the same way before it next fetches or leads, even one
 * that was down or outside the ISR then (the leader too: its own cut may fail after the record). Otherwise a replica could keep batches the leader dropped,
 * while the leader stores the source's batches at the same offsets, of the same epochs: KIP-320's
 * epoch check sees no divergence and the replica rejoins the ISR with other content.
 *
 * Each record is applied once and then reported to the controller, which clears it. A report the controller
 * cannot hear is sent again until it lands. Which record each replica applied last (its metadata offset) is
 * stored in the data dir (`APPLIED_TRUNCATIONS_CHECKPOINT`) before the replica fetches or leads again: a
 * broker restarted before its report landed must not cut again, since what it fetched (or took as leader)
 * since may be committed, and no other replica may hold it any more.
 */
export class OwedTruncations {
  /** Replica key -> metadata offset of the last truncation record it applied, as stored. */
  private applied = new Map<string, number>();
  private readonly retrying = new Map<string, Cancel>();

  constructor(
    private readonly brokerId: number,
    private readonly controller: Controller,
    private readonly scheduler: Scheduler,
    private readonly retryMs: number,
    private readonly dataDir: Pick<DataDir, "readCheckpoint" | "writeCheckpoint">,
  ) {}

  /** Reads what this data dir's replicas applied (the broker starts); a damaged file counts as none. */
  load(): void {
    this.applied = parseAppliedTruncations(this.dataDir.readCheckpoint(APPLIED_TRUNCATIONS_CHECKPOINT));
  }

  /**
   * Cuts the replica's log as the cuts of `owed` it has not applied yet say (combined), and stores that it
   * applied them all. True when the log changed. `stillOwed(key, id)` tells which other stored entries to
   * keep: those whose replica still owes a cut up to `id` (a cut settled is never owed again: a later one has
   * a larger id). A cut or a store that throws (a full disk:
   * `KafkaStorageError`) counts as not applied: the caller neither fetches nor leads, and the next call cuts
   * again (nothing was appended since) and stores again; nothing is reported before that.
   */
  apply(
    replica: TruncatingReplica,
    owed: PendingTruncation,
    stillOwed: (key: string, id: number) => boolean,
  ): boolean {
    const due = cutsAfter(owed, this.applied.get(replica.key) ?? -1);
    if (due === undefined) return false;
    const changed = cut(replica.log, due);
    const next = new Map([...this.applied].filter(([key, id]) => key !== replica.key && stillOwed(key, id)));
    next.set(replica.key, owed.id);
    this.dataDir.writeCheckpoint(APPLIED_TRUNCATIONS_CHECKPOINT, formatAppliedTruncations(next));
    this.applied = next;
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

  /** Stops retrying (the broker stopped: its next start reloads what was applied and learns from the feed). */
  clear(): void {
    this.applied = new Map();
    for (const cancel of this.retrying.values()) cancel();
    this.retrying.clear();
  }
}

/** Cuts `log` as `owed` says; true when the log changed. */
function cut(log: PartitionLog, owed: ReplicaCut): boolean {
  if (owed.full) {
    if (log.logEndOffset === log.logStartOffset && log.logStartOffset === owed.offset) return false;
    log.truncateFullyAndStartAt(owed.offset);
    return true;
  }
  if (log.logEndOffset <= owed.offset) return false;
  log.truncateTo(owed.offset);
  return true;
}

/** Name of the file a broker stores which truncation record each replica applied last in. */
export const APPLIED_TRUNCATIONS_CHECKPOINT = "replica-truncation-checkpoint";

/** Version line, count, then `replicaKey truncationId` per line, as Kafka's offset checkpoints. */
function formatAppliedTruncations(applied: ReadonlyMap<string, number>): string {
  const lines = [...applied].map(([key, id]) => `${key} ${id}`);
  return `0\n${lines.length}\n${lines.join("\n")}${lines.length ? "\n" : ""}`;
}

function parseAppliedTruncations(text: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  const lines = text?.split("\n").filter((l) => l.length > 0) ?? [];
  if (lines[0] !== "0") return out;
  for (const line of lines.slice(2)) {
    const m = /^(\S+) (\d+)$/.exec(line);
    if (m && Number.isSafeInteger(Number(m[2]))) out.set(m[1]!, Number(m[2]));
  }
  return out;
}
