import { ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";

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
 * to the next due task. Every task that runs is recorded in `trace` and folded into `digest`. It is the
 * cluster's `ManualScheduler` with a seeded tie-break and a trace.
 */
export class SeededScheduler extends ManualScheduler {
  private readonly events: TraceEvent[] = [];
  private readonly capacity: number;
  private hash = 0x811c9dc5;
  private count = 0;

  constructor(clock: SchedulerClock, options: SeededSchedulerOptions) {
    const random = new SeededRandom(options.seed);
    const shuffle = options.shuffle ?? true;
    super(clock, {
      choose: (ready) => (shuffle ? random.nextInt(ready) : 0),
      onRun: (due, seq, ready) => this?.record(due, seq, ready),
    });
    this.capacity = options.traceCapacity ?? 10_000;
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

  private record(due: number, seq: number, ready: number): void {
    this.count++;
    for (const n of [due, seq, ready]) {
      this.hash = Math.imul(this.hash ^ (n & 0xffffffff), 0x01000193);
      this.hash = Math.imul(this.hash ^ Math.floor(n / 0x100000000), 0x01000193);
    }
    this.events.push({ at: due, seq, ready });
    // Trimmed in chunks so that recording stays O(1) amortized.
    if (this.events.length >= this.capacity * 2) this.events.splice(0, this.events.length - this.capacity);
  }
}
