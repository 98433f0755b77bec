import { type Cancel, ClusterError, type Scheduler } from "@cluster-mirror/cluster";
import { UnknownMirrorError } from "../admin/errors";
import type { RefreshReport } from "./mirror-metadata-manager";
import { rejectWaiters } from "./reject-waiters";

interface SyncWaiter {
  mirror: string;
  resolve: (report: RefreshReport) => void;
  reject: (error: Error) => void;
  cancelTimeout: Cancel;
}

/**
 * Callers waiting for a mirror's next full metadata sync (topics, partitions, configs, groups, ACLs, state
 * commands: the refresh run by the broker that leads the mirror). A waiter counts only refreshes that
 * started after it registered, on any broker's metadata manager: `refreshStarted` captures the waiters
 * present at a refresh's start, and the function it returns resolves them when that refresh ends as the
 * leader's. A refresh that ends as a non-leader's (leadership moved) leaves them for the next one.
 */
export class SyncWaiters {
  private readonly waiters = new Set<SyncWaiter>();

  constructor(
    private readonly scheduler: Scheduler,
    /** The mirrors that exist now (for the error of a mirror deleted while waited on). */
    private readonly knownMirrors: () => string[],
  ) {}

  private closedWith: Error | undefined;

  /** Rejects every waiter with `error` and cancels its timer; later calls reject with it at once. */
  closeAll(error: Error): void {
    this.closedWith = error;
    rejectWaiters(this.waiters, error);
  }

  /** Resolves with the report of the next full sync of `mirror` that starts after this call. */
  next(mirror: string, timeoutMs: number): Promise<RefreshReport> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise<RefreshReport>((resolve, reject) => {
      const waiter: SyncWaiter = {
        mirror,
        resolve,
        reject,
        cancelTimeout: this.scheduler.schedule(() => {
          if (!this.waiters.delete(waiter)) return;
          reject(
            new ClusterError(
              "REQUEST_TIMED_OUT",
              `no full metadata sync of mirror '${mirror}' completed within ${timeoutMs} ms: the broker leading its __mirror_state partition may be down, or mirror.metadata.refresh.interval.ms is longer than the wait. Call refreshNow('${mirror}') to sync at once, or wait longer.`,
            ),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  /** A refresh of `mirror` started: returns what resolves the waiters it captured when it ends. */
  refreshStarted(mirror: string): (report: RefreshReport | undefined) => void {
    const captured = [...this.waiters].filter((w) => w.mirror === mirror);
    return (report) => {
      if (report !== undefined && !report.leader) return;
      for (const waiter of captured) {
        if (!this.waiters.delete(waiter)) continue;
        waiter.cancelTimeout();
        if (report) waiter.resolve(report);
        else waiter.reject(new UnknownMirrorError(mirror, this.knownMirrors()));
      }
    };
  }
}
