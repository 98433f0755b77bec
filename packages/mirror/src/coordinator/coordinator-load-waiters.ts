import { type Cancel, ClusterError, type Scheduler } from "@cluster-mirror/cluster";
import { rejectWaiters } from "../metadata/reject-waiters";
import type { MirrorPartitionKey } from "../ports";

/** Default bound of a wait for the coordinators' load (`coordinatorLoadTimeoutMs`). */
export const DEFAULT_COORDINATOR_LOAD_TIMEOUT_MS = 30_000;

/** Where a `__mirror_state` partition's coordinator stands, as the waiters see it. */
export interface CoordinatorLoadStatus {
  /** The `__mirror_state` partition that owns the key. */
  statePartition: number;
  /** ACTIVE when it serves commands; else what it is doing (LOADING, FAILED, no leader...). */
  state: string;
}

/** What the waiters ask about the cluster. */
export interface CoordinatorLoadView {
  /** Where the coordinator of `key` stands now. */
  statusOf(key: MirrorPartitionKey): CoordinatorLoadStatus;
  /**
   * Whether the coordinator of every `__mirror_state` partition is ACTIVE now: then no key is looked at
   * (`statusOf` hashes each key, and an admin operation waits for every partition of its topics).
   */
  allActive?(): boolean;
}

interface Waiter {
  keys: readonly MirrorPartitionKey[];
  resolve: () => void;
  reject: (error: Error) => void;
  cancelTimeout: Cancel;
}

/**
 * Waits until the coordinators owning some mirror partitions have loaded their `__mirror_state` partitions
 * (right after `ClusterMirroring.start` every shard is LOADING and answers COORDINATOR_NOT_AVAILABLE).
 * Event-driven: the owner calls `changed()` when a shard activates or a broker comes or goes, and each
 * waiter re-checks its keys then; the only timer is the timeout, on the injected scheduler.
 */
export class CoordinatorLoadWaiters {
  private readonly waiters = new Set<Waiter>();

  constructor(
    private readonly view: CoordinatorLoadView,
    private readonly scheduler: Scheduler,
  ) {}

  /**
   * Resolves at once when every key's coordinator is ACTIVE, else when they all are; rejects after
   * `timeoutMs` with a retriable COORDINATOR_NOT_AVAILABLE naming the `__mirror_state` partitions that did
   * not load and what they are doing.
   */
  whenLoaded(keys: readonly MirrorPartitionKey[], timeoutMs: number): Promise<void> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (this.pending(keys).length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        keys,
        resolve,
        reject,
        cancelTimeout: this.scheduler.schedule(() => {
          if (!this.waiters.delete(waiter)) return;
          const pending = this.pending(keys);
          const shown = pending
            .slice(0, 5)
            .map((s) => `__mirror_state-${s.statePartition} ${s.state}`)
            .join(", ");
          reject(
            new ClusterError(
              "COORDINATOR_NOT_AVAILABLE",
              `the mirror coordinators did not finish loading within ${timeoutMs} ms (coordinatorLoadTimeoutMs): ${shown}${pending.length > 5 ? `, and ${pending.length - 5} more` : ""}. Check that the brokers leading these __mirror_state partitions are running, then retry.`,
            ),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  private closedWith: Error | undefined;

  /** Rejects every waiter with `error` and cancels its timer; later calls reject with it at once. */
  closeAll(error: Error): void {
    this.closedWith = error;
    rejectWaiters(this.waiters, error);
  }

  /** Re-checks every waiter (a shard activated, a broker started or stopped). */
  changed(): void {
    for (const waiter of [...this.waiters]) {
      if (this.pending(waiter.keys).length > 0) continue;
      this.waiters.delete(waiter);
      waiter.cancelTimeout();
      waiter.resolve();
    }
  }

  /** The distinct `__mirror_state` partitions of `keys` whose coordinator is not ACTIVE. */
  private pending(keys: readonly MirrorPartitionKey[]): CoordinatorLoadStatus[] {
    if (this.view.allActive?.() === true) return [];
    const byPartition = new Map<number, CoordinatorLoadStatus>();
    for (const key of keys) {
      const status = this.view.statusOf(key);
      if (status.state !== "ACTIVE") byPartition.set(status.statePartition, status);
    }
    return [...byPartition.values()].sort((a, b) => a.statePartition - b.statePartition);
  }
}
