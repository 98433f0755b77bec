import type { Cancel, Scheduler } from "@cluster-mirror/cluster";
import { SeededRandom } from "@cluster-mirror/cluster";

/** The clock a scheduler drives: the simulation's `ManualClock`. */
export interface SchedulerClock {
  now(): number;
  advance(ms: number): void;
}

/** One task that ran: when, its submission number, and how many tasks were due with it. */
export interface TraceEvent {
  /** Virtual time it ran at. */
  at: number;
  /** Submission number (order of `schedule` calls since the start). */
  seq: number;
  /** Tasks that were due at that instant when it was picked (1 = no choice was made). */
  ready: number;
}

interface Task {
  due: number;
  seq: number;
  task: () => void;
  cancelled: boolean;
}

/** Settings of a `SeededScheduler`. */
export interface SeededSchedulerOptions {
  /** Seed of the interleaving choices. */
  seed: number;
  /** Events kept in `trace` (the oldest are dropped; `digest` covers all). Default 10 000. */
  traceCapacity?: number;
  /** When false, tasks due at the same instant run in submission order, like `ManualScheduler`. */
  shuffle?: boolean;
}

/**
 * A `Scheduler` on a manual clock whose order among tasks due at the same instant is chosen by a seeded
 * random generator: different seeds explore different interleavings, the same seed replays the same run
 * event for event. Tasks due at different instants always run in time order, and the clock jumps straight
 * to the next due task. Every task that runs is recorded in `trace` and folded into `digest`.
 */
export class SeededScheduler implements Scheduler {
  private readonly queue: Task[] = [];
  private readonly random: SeededRandom;
  private readonly shuffle: boolean;
  private readonly capacity: number;
  private readonly events: TraceEvent[] = [];
  private seq = 0;
  private hash = 0x811c9dc5;
  private count = 0;

  constructor(
    private readonly clock: SchedulerClock,
    options: SeededSchedulerOptions,
  ) {
    this.random = new SeededRandom(options.seed);
    this.shuffle = options.shuffle ?? true;
    this.capacity = options.traceCapacity ?? 10_000;
  }

  schedule(task: () => void, delayMs = 0): Cancel {
    const entry: Task = {
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

  /** Tasks waiting (cancelled ones excluded). */
  get pending(): number {
    return this.queue.filter((t) => !t.cancelled).length;
  }

  /** Tasks run so far. */
  get executed(): number {
    return this.count;
  }

  /** The most recent events (up to the trace capacity), oldest first. */
  get trace(): readonly TraceEvent[] {
    return this.events.slice(-this.capacity);
  }

  /** FNV-1a over every event so far: equal digests mean equal runs (same tasks, same order, same times). */
  get digest(): string {
    return `${this.count}:${(this.hash >>> 0).toString(16)}`;
  }

  /**
   * Runs due tasks, advancing the clock to each, until none is due by `now + maxMs` or `maxTasks` ran;
   * returns how many ran. Tasks scheduled while running take part. Same contract as `ManualScheduler.run`.
   */
  run(maxMs = 0, maxTasks = 1_000_000): number {
    const until = this.clock.now() + maxMs;
    let ran = 0;
    while (ran < maxTasks) {
      const next = this.takeNext(until);
      if (!next) break;
      if (next.task.due > this.clock.now()) this.clock.advance(next.task.due - this.clock.now());
      this.record(next.task, next.ready);
      next.task.task();
      ran++;
    }
    if (this.clock.now() < until) this.clock.advance(until - this.clock.now());
    return ran;
  }

  private takeNext(until: number): { task: Task; ready: number } | undefined {
    let due = Number.POSITIVE_INFINITY;
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const t = this.queue[i]!;
      if (t.cancelled) {
        this.queue.splice(i, 1);
        continue;
      }
      if (t.due <= until && t.due < due) due = t.due;
    }
    if (due === Number.POSITIVE_INFINITY) return undefined;
    // Candidates in submission order, so the seeded pick depends only on the seed and the run so far.
    const candidates: number[] = [];
    for (let i = 0; i < this.queue.length; i++) if (this.queue[i]!.due === due) candidates.push(i);
    const pick = this.shuffle ? this.random.nextInt(candidates.length) : 0;
    const index = candidates[pick]!;
    const [task] = this.queue.splice(index, 1);
    return { task: task!, ready: candidates.length };
  }

  private record(task: Task, ready: number): void {
    this.count++;
    for (const n of [task.due, task.seq, ready]) {
      this.hash = Math.imul(this.hash ^ (n & 0xffffffff), 0x01000193);
      this.hash = Math.imul(this.hash ^ Math.floor(n / 0x100000000), 0x01000193);
    }
    this.events.push({ at: task.due, seq: task.seq, ready });
    // Trimmed in chunks so that recording stays O(1) amortized.
    if (this.events.length >= this.capacity * 2) this.events.splice(0, this.events.length - this.capacity);
  }
}
