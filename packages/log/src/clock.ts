/**
 * The log's only source of time. Injected so that segment rolling, delete horizons and tests are
 * deterministic: nothing in this package reads the wall clock itself.
 */
export interface Clock {
  /** Milliseconds since the epoch (or since any fixed origin the owner chooses). */
  now(): number;
}

/** A clock that moves only when told to; for tests and simulations. */
export class ManualClock implements Clock {
  private current: number;

  /** Starts at `startMs`. */
  constructor(startMs = 0) {
    this.current = startMs;
  }

  /** The current time. */
  now(): number {
    return this.current;
  }

  /** Moves the clock forward by `ms`. */
  advance(ms: number): void {
    this.current += ms;
  }

  /** Sets the clock to `ms`. */
  set(ms: number): void {
    this.current = ms;
  }
}
