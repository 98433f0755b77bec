/** Time, injected everywhere so that logic never reads the wall clock and simulations stay deterministic. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** A clock that only moves when told to: for tests and the simulator. */
export class ManualClock implements Clock {
  private time: number;

  constructor(startMs = 0) {
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  /** Moves time forward by `ms` (never backwards). */
  advance(ms: number): void {
    if (ms < 0) throw new RangeError(`a clock cannot go back ${-ms} ms`);
    this.time += ms;
  }
}
