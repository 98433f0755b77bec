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

/**
 * Virtual time cannot move: tasks keep scheduling tasks at the same instant (a retry without delay, a
 * commit that re-enters its own state). Without this the run would spin until the test runner's wall-clock
 * timeout and report nothing; with it the property reports a counterexample with its seed.
 */
export class VirtualLivelockError extends Error {
  constructor(
    readonly at: number,
    readonly tasks: number,
  ) {
    super(
      `virtual time is stuck at ${at} ms: ${tasks} tasks ran at that instant and keep scheduling more without ` +
        "delay (a loop with no backoff); look for work that re-runs itself at once",
    );
    this.name = "VirtualLivelockError";
  }
}

/** Tasks run per scheduler step before promise continuations get a turn. */
const TASKS_PER_STEP = 50_000;

/**
 * Tasks allowed at one virtual instant before the run counts as a livelock. The busiest instant of the
 * property suites (every suite, 20 runs each, 3 Dec) ran 232 tasks; the FAILED loop found by the soak of
 * 2 Dec ran without end.
 */
export const LIVELOCK_TASKS = 100_000;

/**
 * Drives a simulation's virtual time: runs the scheduler's due tasks and lets promise continuations run
 * between them, so `await`-based code in the engine makes progress exactly as it would on a real loop, but
 * in an order fixed by the seed. Nothing here reads the wall clock.
 */
export class VirtualTime {
  private instant = Number.NaN;
  private tasksAtInstant = 0;
  private busiest = 0;

  constructor(
    readonly clock: SchedulerClock,
    readonly scheduler: RunnableScheduler,
    private readonly livelockTasks = LIVELOCK_TASKS,
  ) {}

  /** The most tasks run at one virtual instant so far (how close a run came to the livelock guard). */
  get busiestInstant(): number {
    return this.busiest;
  }

  /** One scheduler step; throws VirtualLivelockError when the clock stays put while tasks keep running. */
  private step(maxMs: number): number {
    const ran = this.scheduler.run(maxMs, TASKS_PER_STEP);
    const now = this.clock.now();
    if (now !== this.instant) {
      this.instant = now;
      this.tasksAtInstant = 0;
    }
    this.tasksAtInstant += ran;
    if (this.tasksAtInstant > this.busiest) this.busiest = this.tasksAtInstant;
    if (this.tasksAtInstant > this.livelockTasks) throw new VirtualLivelockError(now, this.tasksAtInstant);
    return ran;
  }

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
      if (this.step(0) > 0) continue;
      await flushMicrotasks();
      if (done) break;
      if (this.clock.now() >= end) {
        work.catch(() => undefined);
        throw new VirtualTimeoutError("the awaited work", maxMs);
      }
      this.step(5);
    }
    return work;
  }

  /** Runs virtual time forward by `ms`, letting everything due happen. */
  async advance(ms: number): Promise<void> {
    const end = this.clock.now() + ms;
    while (this.clock.now() < end) {
      await flushMicrotasks();
      this.step(Math.min(10, end - this.clock.now()));
    }
    await flushMicrotasks();
    this.step(0);
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
