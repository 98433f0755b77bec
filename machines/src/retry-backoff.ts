/**
 * Capped exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff And Jitter"),
 * as KIP-1279's FAILED retry uses it. The random number is an argument: nothing here reads a clock or
 * `Math.random()`, so the same inputs always give the same delay.
 */

/** Tuning of the FAILED retry backoff (`mirror.failed.retry.*` in the early KIP-1279 revision). */
export interface RetryBackoffOptions {
  /** First ceiling in ms (attempt 0): `mirror.failed.retry.initial.backoff.ms`. */
  readonly baseMs: number;
  /** Largest ceiling in ms, whatever the attempt: `mirror.failed.retry.max.backoff.ms`. */
  readonly capMs: number;
  /**
   * Retries allowed before the partition stays FAILED (RetryAttempt -1) until an operator acts:
   * `mirror.failed.retry.max.attempts`. 0 means unlimited (the early POC's semantics; the later revision
   * reads 0 as "disabled").
   */
  readonly maxAttempts: number;
}

/** Defaults of the POC's early revision: initial 1000 ms, max 300000 ms, 10 attempts. */
export const DEFAULT_RETRY_BACKOFF: RetryBackoffOptions = Object.freeze({
  baseMs: 1000,
  capMs: 300_000,
  maxAttempts: 10,
});

/**
 * The backoff of a `__mirror_state` append that failed (the commit step re-appends the same record): as
 * Kafka's clients retry a coordinator's write, `retry.backoff.ms` 100 growing to `retry.backoff.max.ms`
 * 1000 (KIP-580), never giving up. Not the FAILED retry's: that one grows to minutes, and a record refused
 * through a long outage (a full disk, an ISR under min.insync.replicas) was appended again up to that long
 * after the outage ended, holding the partition's change (a failover) back as long.
 */
export const COMMIT_RETRY_BACKOFF: RetryBackoffOptions = Object.freeze({
  baseMs: 100,
  capMs: 1000,
  maxAttempts: 0,
});

/** Whether `attempt` retries have used up the budget (`maxAttempts` 0: never). */
export function retryAttemptsExhausted(attempt: number, options: RetryBackoffOptions): boolean {
  return options.maxAttempts > 0 && attempt >= options.maxAttempts;
}

/** The ceiling for `attempt` (0-based): `min(cap, base * 2^attempt)`. */
export function retryBackoffCeilingMs(
  attempt: number,
  options: RetryBackoffOptions = DEFAULT_RETRY_BACKOFF,
): number {
  // 2^attempt overflows to Infinity for huge attempts; min() with the cap keeps the result finite.
  return Math.min(options.capMs, options.baseMs * 2 ** Math.max(0, attempt));
}

/**
 * Full-jitter delay for `attempt`: `floor(random * min(cap, base * 2^attempt))`. `random` must be in [0, 1);
 * values outside are clamped so a bad input cannot produce a negative or over-cap delay.
 */
export function retryBackoffDelayMs(
  attempt: number,
  random: number,
  options: RetryBackoffOptions = DEFAULT_RETRY_BACKOFF,
): number {
  const r = Number.isFinite(random) ? Math.min(Math.max(random, 0), 1) : 1;
  return Math.floor(r * retryBackoffCeilingMs(attempt, options));
}
