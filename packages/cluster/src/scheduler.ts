/** Cancels a scheduled task; cancelling twice, or after it ran, does nothing. */
export type Cancel = () => void;

/**
 * Where the cluster runs its asynchronous steps (replica fetches, request timeouts, coordinator timers).
 * Embedded use runs them on Node's event loop; the simulator supplies a seeded scheduler on a virtual clock
 * so that every interleaving is reproducible.
 */
export interface Scheduler {
  /** Runs `task` after `delayMs` (0 = as soon as possible, after the current step). */
  schedule(task: () => void, delayMs?: number): Cancel;
}

/**
 * The embedded default: tasks with no delay run on `setImmediate`, delayed ones on `setTimeout`. Timers are
 * unref'd so an idle cluster never keeps a process alive.
 */
export class EventLoopScheduler implements Scheduler {
  schedule(task: () => void, delayMs = 0): Cancel {
    if (delayMs <= 0) {
      const handle = setImmediate(task);
      return () => clearImmediate(handle);
    }
    const handle = setTimeout(task, delayMs);
    handle.unref();
    return () => clearTimeout(handle);
  }
}
