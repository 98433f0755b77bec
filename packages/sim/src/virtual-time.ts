import { flushMicrotasks } from "./flush";
import type { SchedulerClock } from "./seeded-scheduler";

/** What `VirtualTime` drives: a scheduler with `ManualScheduler`'s `run(maxMs, maxTasks)`. */
export interface RunnableScheduler {
  run(maxMs?: number, maxTasks?: number): number;
}

/** Virtual time ran out before the awaited work settled or the condition held. */
export class VirtualTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not happen within ${ms} ms of virtual time`);
    this.name = "VirtualTimeoutError";
  }
}

/** Tasks run per scheduler step before promise continuations get a turn (a livelock guard, not a limit). */
const TASKS_PER_STEP = 50_000;

/**
 * Drives a simulation's virtual time: runs the scheduler's due tasks and lets promise continuations run
 * between them, so `await`-based code in the engine makes progress exactly as it would on a real loop, but
 * in an order fixed by the seed. Nothing here reads the wall clock.
 */
export class VirtualTime {
  constructor(
    readonly clock: SchedulerClock,
    readonly scheduler: RunnableScheduler,
  ) {}

  /** Virtual now, ms. */
  now(): number {
    return this.clock.now();
  }

  /** Drives virtual time until `work` settles (or `maxMs` pass: VirtualTimeoutError); returns its outcome. */
  async run<T>(work: Promise<T>, maxMs = 600_000): Promise<T> {
    let done = false;
    const settled = () => {
      done = true;
    };
    work.then(settled, settled);
    const end = this.clock.now() + maxMs;
    while (!done) {
      await flushMicrotasks();
      if (done) break;
      if (this.scheduler.run(0, TASKS_PER_STEP) > 0) continue;
      await flushMicrotasks();
      if (done) break;
      if (this.clock.now() >= end) {
        work.catch(() => undefined);
        throw new VirtualTimeoutError("the awaited work", maxMs);
      }
      this.scheduler.run(5, TASKS_PER_STEP);
    }
    return work;
  }

  /** Runs virtual time forward by `ms`, letting everything due happen. */
  async advance(ms: number): Promise<void> {
    const end = this.clock.now() + ms;
    while (this.clock.now() < end) {
      await flushMicrotasks();
      this.scheduler.run(Math.min(10, end - this.clock.now()), TASKS_PER_STEP);
    }
    await flushMicrotasks();
    this.scheduler.run(0, TASKS_PER_STEP);
    await flushMicrotasks();
  }

  /** Advances virtual time in `stepMs` steps until `predicate` holds (VirtualTimeoutError after `maxMs`). */
  async until(
    predicate: () => boolean | Promise<boolean>,
    what: string,
    maxMs = 600_000,
    stepMs = 50,
  ): Promise<void> {
    const end = this.clock.now() + maxMs;
    while (!(await predicate())) {
      if (this.clock.now() >= end) throw new VirtualTimeoutError(what, maxMs);
      await this.advance(stepMs);
    }
  }
}
