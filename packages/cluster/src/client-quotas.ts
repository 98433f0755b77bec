import type { Clock } from "./clock";

/** Which byte rate a quota limits. */
export type QuotaType = "produce" | "fetch";

/** Quota manager settings, as Kafka's `quota.window.num` and `quota.window.size.seconds`. */
export interface ClientQuotaOptions {
  clock: Clock;
  /** Number of sample windows (default 11). */
  numWindows?: number;
  /** Length of one window in ms (default 1000). */
  windowMs?: number;
}

interface Sample {
  start: number;
  bytes: number;
}

/**
 * Per-client-id byte-rate quotas for produce and fetch, like Kafka's ClientQuotaManager: bytes are recorded
 * in fixed windows; when the observed rate is above the quota, the answer carries a throttle time
 * `(observed - quota) / quota * windowSpan` for the client to wait. Quotas change at run time.
 */
export class ClientQuotaManager {
  private readonly clock: Clock;
  private readonly numWindows: number;
  private readonly windowMs: number;
  private readonly quotas = new Map<string, number>();
  private readonly samples = new Map<string, Sample[]>();

  constructor(options: ClientQuotaOptions) {
    this.clock = options.clock;
    this.numWindows = options.numWindows ?? 11;
    this.windowMs = options.windowMs ?? 1000;
  }

  /** Sets (bytes per second) or removes (undefined) the quota of a client id; "" sets the default. */
  setQuota(type: QuotaType, clientId: string, bytesPerSecond: number | undefined): void {
    const key = `${type}\u0000${clientId}`;
    if (bytesPerSecond === undefined) this.quotas.delete(key);
    else {
      if (!(bytesPerSecond > 0))
        throw new RangeError(`a byte-rate quota must be positive, got ${bytesPerSecond}`);
      this.quotas.set(key, bytesPerSecond);
    }
  }

  /** The quota that applies to a client id: its own, else the default, else none. */
  quotaFor(type: QuotaType, clientId: string): number | undefined {
    return this.quotas.get(`${type}\u0000${clientId}`) ?? this.quotas.get(`${type}\u0000`);
  }

  /**
   * Kafka's `getMaxValueInQuotaWindow`: the most a client may take at once without being throttled whatever it
   * took before, `quota * (numWindows - 1)` windows' worth (Infinity without a quota). A consumer's fetch is
   * capped to it, so that a small quota is not overrun by one large response and then paid for with a
   * throttle of minutes.
   */
  maxValueInQuotaWindow(type: QuotaType, clientId: string): number {
    const quota = this.quotaFor(type, clientId);
    if (quota === undefined) return Number.POSITIVE_INFINITY;
    return Math.floor((quota * (this.numWindows - 1) * this.windowMs) / 1000);
  }

  /** Records `bytes` for the client and returns the throttle time in ms (0 when within quota). */
  record(type: QuotaType, clientId: string, bytes: number): number {
    const now = this.clock.now();
    const live = this.add(`${type}\u0000${clientId}`, bytes, now);
    const quota = this.quotaFor(type, clientId);
    if (quota === undefined) return 0;
    const total = live.reduce((sum, s) => sum + s.bytes, 0);
    // Kafka measures over the elapsed span, at least (numWindows - 1) full windows.
    const spanMs = Math.max(now - live[0]!.start, (this.numWindows - 1) * this.windowMs);
    const observed = (total * 1000) / spanMs;
    if (observed <= quota) return 0;
    return Math.round(((observed - quota) / quota) * spanMs);
  }

  /**
   * Kafka's `unrecordQuotaSensor`: takes back `bytes` recorded for a fetch that is answered without its data
   * because it was throttled (the client fetches them again once its throttle time has passed).
   */
  unrecord(type: QuotaType, clientId: string, bytes: number): void {
    this.add(`${type}\u0000${clientId}`, -bytes, this.clock.now());
  }

  /** Adds `bytes` to the current window of `key` and returns its live windows. */
  private add(key: string, bytes: number, now: number): Sample[] {
    const windowStart = now - (now % this.windowMs);
    const samples = this.samples.get(key) ?? [];
    const oldest = windowStart - (this.numWindows - 1) * this.windowMs;
    const live = samples.filter((s) => s.start >= oldest);
    const current = live[live.length - 1];
    if (current && current.start === windowStart) current.bytes += bytes;
    else live.push({ start: windowStart, bytes });
    this.samples.set(key, live);
    return live;
  }
}
