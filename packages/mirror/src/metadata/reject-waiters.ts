import type { Cancel } from "@cluster-mirror/cluster";

/** A waiter with a timeout: what `rejectWaiters` ends. */
export interface TimedWaiter {
  reject: (error: Error) => void;
  cancelTimeout: Cancel;
}

/** Ends every waiter of `waiters` with `error` and cancels its timer (the owner was closed). */
export function rejectWaiters(waiters: Set<TimedWaiter>, error: Error): void {
  for (const waiter of [...waiters]) {
    waiters.delete(waiter);
    waiter.cancelTimeout();
    waiter.reject(error);
  }
}
