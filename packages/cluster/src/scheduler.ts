import { runSoon } from "./run-soon";
import { TimerQueue } from "./timer-queue";

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
 * The embedded default: tasks with no delay run on `setImmediate` (a `MessageChannel` in browsers, see
 * `runSoon`), delayed ones on `setTimeout`. A running
 * cluster keeps the process alive, like a Kafka client with open connections; closing the cluster (and its
 * mirroring) cancels its timers so the process can exit. `{ keepAlive: false }` unrefs delayed timers.
 */
export class EventLoopScheduler implements Scheduler {
  constructor(private readonly options: { keepAlive?: boolean } = {}) {}

  schedule(task: () => void, delayMs = 0): Cancel {
    if (delayMs <= 0) return runSoon(task);
    const handle = setTimeout(task, delayMs);
    // Browsers give a number, with nothing to unref.
    if (this.options.keepAlive === false) handle.unref?.();
    return () => clearTimeout(handle);
  }
}

/** How a `ManualScheduler` orders tasks due at the same instant, and what it tells about each run. */
export interface ManualSchedulerOptions {
  /**
   * Picks which of the `ready` tasks due at the same instant runs next (an index into them, in submission
   * order). Default: the first, i.e. submission order. The simulator picks with a seeded random.
   */
  choose?: (ready: number) => number;
  /** Hears each task as it runs: its due time, submission number and how many were ready with it. */
  onRun?: (due: number, seq: number, ready: number) => void;
}

/**
 * A scheduler on a manual clock: nothing runs until the owner says so, tasks run in due-time order (ties
 * broken by `choose`, submission order by default), and time jumps straight to the next due task. Tests
 * and the simulator get the same run every time.
 */
export class ManualScheduler implements Scheduler {
  private readonly queue = new TimerQueue<() => void>();
  private seq = 0;

  constructor(
    private readonly clock: { now(): number; advance(ms: number): void },
    private readonly options: ManualSchedulerOptions = {},
  ) {}

  schedule(task: () => void, delayMs = 0): Cancel {
    const entry = this.queue.add(this.clock.now() + Math.max(0, delayMs), this.seq++, task);
    return () => this.queue.cancel(entry);
  }

  /** Number of tasks waiting (cancelled ones excluded). */
  get pending(): number {
    return this.queue.size;
  }

  /**
   * When the earliest waiting task is due (undefined when none waits): a driver that interleaves promise
   * continuations can jump the clock straight there (`run(nextDue - now)`) instead of stepping 1 ms at a time.
   */
  get nextDue(): number | undefined {
    return this.queue.nextDue();
  }

  /**
   * Runs due tasks in order, advancing the clock to each, until none is due by `now + maxMs` or
   * `maxTasks` ran; returns how many ran. Tasks scheduled while running take part.
   */
  run(maxMs = 0, maxTasks = 1_000_000): number {
    const until = this.clock.now() + maxMs;
    let ran = 0;
    while (ran < maxTasks) {
      const due = this.queue.nextDue();
      if (due === undefined || !(due <= until)) break;
      // Candidates are the tasks due at that instant, in submission order; `choose` picks one.
      const ready = this.queue.readyAt(due);
      const pick = this.options.choose?.(ready) ?? 0;
      const entry = this.queue.take(due, Number.isInteger(pick) && pick >= 0 && pick < ready ? pick : 0);
      if (due > this.clock.now()) this.clock.advance(due - this.clock.now());
      this.options.onRun?.(due, entry.seq, ready);
      entry.value();
      ran++;
    }
    if (this.clock.now() < until) this.clock.advance(until - this.clock.now());
    return ran;
  }

  /** Runs everything due now (and what that schedules with no delay), without moving the clock. */
  runDue(): number {
    return this.run(0);
  }
}
