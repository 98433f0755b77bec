import { KafkaError } from "@cluster-mirror/protocol";
import type { Random } from "../random";
import type { Scheduler } from "../scheduler";
import { checkRetryOptions } from "./client-config-checks";

/** kafkajs's retry settings (`retry` of the client, producer, consumer and admin). */
export interface RetryOptions {
  /** Largest wait between two attempts, ms (default 30000). */
  maxRetryTime?: number;
  /** First wait, ms (default 300). */
  initialRetryTime?: number;
  /** Randomization of each wait, a fraction of it (default 0.2). */
  factor?: number;
  /** Growth of the wait per attempt (default 2). */
  multiplier?: number;
  /** Retries after the first attempt (default 5). */
  retries?: number;
}

const DEFAULTS: Required<RetryOptions> = {
  maxRetryTime: 30_000,
  initialRetryTime: 300,
  factor: 0.2,
  multiplier: 2,
  retries: 5,
};

/**
 * Errors a client retries after a backoff (refreshing the leader first): the broker's answer may change
 * once a leader is elected, a broker is back, or replicas catch up.
 */
const RETRIABLE = new Set([
  "NOT_LEADER_OR_FOLLOWER",
  "LEADER_NOT_AVAILABLE",
  "REQUEST_TIMED_OUT",
  "NOT_ENOUGH_REPLICAS",
  "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
  "BROKER_NOT_AVAILABLE",
  "UNKNOWN_TOPIC_OR_PARTITION",
  "FENCED_LEADER_EPOCH",
  "UNKNOWN_LEADER_EPOCH",
  "COORDINATOR_NOT_AVAILABLE",
  "NOT_COORDINATOR",
  "CONCURRENT_TRANSACTIONS",
  "KAFKA_STORAGE_ERROR",
]);

/** True for errors worth retrying (see `RETRIABLE`). */
export function isRetriable(error: unknown): boolean {
  return error instanceof KafkaError && RETRIABLE.has(error.errorName);
}

/** Resolves after `ms` on the injected scheduler (never Node's timers: simulations control time). */
export function sleep(scheduler: Scheduler, ms: number): Promise<void> {
  return new Promise((resolve) => {
    scheduler.schedule(resolve, ms);
  });
}

/**
 * kafkajs's retrier: runs `attempt`, and on a retriable error waits
 * `initialRetryTime * multiplier^n` (randomized by `factor`, capped at `maxRetryTime`) on the scheduler
 * and tries again, up to `retries` times. Randomness is injected, so runs repeat.
 */
export class Retrier {
  private readonly options: Required<RetryOptions>;

  constructor(
    options: RetryOptions | undefined,
    private readonly scheduler: Scheduler,
    private readonly random: Random,
  ) {
    // A producer's, consumer's or admin's own `retry` is checked here; the client's was when it was made.
    if (options !== undefined) checkRetryOptions(options, "retry");
    this.options = { ...DEFAULTS, ...options };
  }

  /** The wait before retry number `retryCount` (0-based). */
  backoff(retryCount: number): number {
    const { initialRetryTime, multiplier, factor, maxRetryTime } = this.options;
    const base = initialRetryTime * multiplier ** retryCount;
    const jitter = base * factor * (this.random.next() * 2 - 1);
    return Math.max(0, Math.min(maxRetryTime, Math.round(base + jitter)));
  }

  /** Runs `attempt` with retries; the last error is thrown as it is. */
  async run<T>(attempt: (retryCount: number) => Promise<T> | T, retriable = isRetriable): Promise<T> {
    for (let retry = 0; ; retry++) {
      try {
        return await attempt(retry);
      } catch (error) {
        if (retry >= this.options.retries || !retriable(error)) throw error;
        await sleep(this.scheduler, this.backoff(retry));
      }
    }
  }
}
