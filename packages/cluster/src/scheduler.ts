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
 * The embedded default: tasks with no delay run on `setImmediate`, delayed ones on `setTimeout`. A running
 * cluster keeps the process alive, like a Kafka client with open connections; closing the cluster (and its
 * mirroring) cancels its timers so the process can exit. `{ keepAlive: false }` unrefs delayed timers.
 */
export class EventLoopScheduler implements Scheduler {
  constructor(private readonly options: { keepAlive?: boolean } = {}) {}

  schedule(task: () => void, delayMs = 0): Cancel {
    if (delayMs <= 0) {
      const handle = setImmediate(task);
      return () => clearImmediate(handle);
    }
    const handle = setTimeout(task, delayMs);
    if (this.options.keepAlive === false) handle.unref();
    return () => clearTimeout(handle);
  }
}

interface ScheduledTask {
  due: number;
  seq: number;
  task: () => void;
  cancelled: boolean;
}

/**
 * A scheduler on a manual clock: nothing runs until the owner says so, tasks run in (due time, submission)
 * order, and time jumps straight to the next due task. Tests and the simulator get the same run every time.
 */
export class ManualScheduler implements Scheduler {
  private readonly queue: ScheduledTask[] = [];
  private seq = 0;

  constructor(private readonly clock: { now(): number; advance(ms: number): void }) {}

  schedule(task: () => void, delayMs = 0): Cancel {
    const entry: ScheduledTask = {
      due: this.clock.now() + Math.max(0, delayMs),
      seq: this.seq++,
      task,
      cancelled: false,
    };
    this.queue.push(entry);
    return () => {
      entry.cancelled = true;
    };
  }

  /** Number of tasks waiting (cancelled ones excluded). */
  get pending(): number {
    return this.queue.filter((t) => !t.cancelled).length;
  }

  /**
   * Runs due tasks in order, advancing the clock to each, until none is due by `now + maxMs` or
   * `maxTasks` ran; returns how many ran. Tasks scheduled while running take part.
   */
  run(maxMs = 0, maxTasks = 1_000_000): number {
    const until = this.clock.now() + maxMs;
    let ran = 0;
    while (ran < maxTasks) {
      const next = this.takeNext(until);
      if (!next) break;
      if (next.due > this.clock.now()) this.clock.advance(next.due - this.clock.now());
      next.task();
      ran++;
    }
    if (this.clock.now() < until) this.clock.advance(until - this.clock.now());
    return ran;
  }

  /** Runs everything due now (and what that schedules with no delay), without moving the clock. */
  runDue(): number {
    return this.run(0);
  }

  private takeNext(until: number): ScheduledTask | undefined {
    let best: ScheduledTask | undefined;
    let bestIndex = -1;
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const t = this.queue[i]!;
      if (t.cancelled) {
        this.queue.splice(i, 1);
        bestIndex = bestIndex > i ? bestIndex - 1 : bestIndex;
        continue;
      }
      if (t.due > until) continue;
      if (!best || t.due < best.due || (t.due === best.due && t.seq < best.seq)) {
        best = t;
        bestIndex = i;
      }
    }
    if (best) this.queue.splice(bestIndex, 1);
    return best;
  }
}
