import type { Clock } from "@cluster-mirror/cluster";

/** How long the same warning is held back after it was logged (Kafka's clients log a reconnect per backoff). */
export const REPEAT_WINDOW_MS = 60_000;
/** Distinct warnings remembered at most; the oldest is forgotten first (and so logged again when it recurs). */
const MAX_REMEMBERED = 1_000;

/**
 * Keeps a lasting fault from flooding the log: the first of identical warnings is logged at once; repeats
 * within `windowMs` of it are only counted, and the first one after the window is logged with that count
 * (`repeated`), then the window starts again. A source that stays unreachable thus costs one line a
 * minute per distinct message, not one per retry, and the count still says how often it happened.
 */
export class RepeatedWarnings {
  /** Per message: when it was last logged and how many repeats were held back since. */
  private readonly seen = new Map<string, { loggedAt: number; held: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly emit: (message: string, repeated: number) => void,
    private readonly windowMs: number = REPEAT_WINDOW_MS,
  ) {}

  warn(message: string): void {
    const now = this.clock.now();
    const entry = this.seen.get(message);
    if (entry !== undefined && now - entry.loggedAt < this.windowMs) {
      entry.held++;
      return;
    }
    this.seen.delete(message);
    if (this.seen.size >= MAX_REMEMBERED) {
      const oldest = this.seen.keys().next();
      if (!oldest.done) this.seen.delete(oldest.value);
    }
    this.seen.set(message, { loggedAt: now, held: 0 });
    this.emit(message, entry?.held ?? 0);
  }
}
