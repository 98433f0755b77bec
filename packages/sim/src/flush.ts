import { runSoon } from "@cluster-mirror/cluster";

/**
 * Lets every pending promise continuation run: resolves on the next turn of Node's event loop, after the
 * microtask queue has drained.
 *
 * This is a barrier, not a timer: it never measures or waits for time, and nothing in the simulation is
 * scheduled on Node's loop (all work goes through the seeded scheduler on the manual clock), so the
 * continuations it lets run are exactly the ones the simulated work queued, in the same order every run.
 */
export function flushMicrotasks(): Promise<void> {
  return new Promise<void>((resolve) => runSoon(resolve));
}
