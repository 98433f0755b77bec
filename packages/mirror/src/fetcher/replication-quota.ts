import { type Clock, type ClusterLogger, CONSOLE_LOGGER } from "@cluster-mirror/cluster";

/** Dynamic broker config: bytes/s a destination broker may mirror for its throttled partitions (spec §8). */
export const MIRROR_REPLICATION_THROTTLED_RATE = "mirror.replication.throttled.rate";
/** Topic config: which mirror partitions are throttled, `partition:broker,...` or `*`. */
export const MIRROR_REPLICATION_THROTTLED_REPLICAS = "mirror.replication.throttled.replicas";

/** Where the fetchers read the destination's throttle configs on every fetch round (changes apply at once). */
export interface DestinationConfigs {
  /** A broker's effective dynamic config (its own value, else the cluster default), or undefined. */
  brokerConfig(brokerId: number, name: string): string | undefined;
  /** A topic's dynamic config, or undefined. */
  topicConfig(topic: string, name: string): string | undefined;
}

/** `DestinationConfigs` over an embedded cluster's metadata image (e.g. `cluster.controller.image`). */
export function destinationConfigsOf(image: {
  brokerConfig(brokerId: number, name: string): string | undefined;
  topic(name: string): { configs: ReadonlyMap<string, string> } | undefined;
}): DestinationConfigs {
  return {
    brokerConfig: (brokerId, name) => image.brokerConfig(brokerId, name),
    topicConfig: (topic, name) => image.topic(topic)?.configs.get(name),
  };
}

/**
 * Whether `mirror.replication.throttled.replicas` (`*`, or a `partition:broker` list) throttles `partition`
 * on destination broker `brokerId`, as Kafka reads `leader/follower.replication.throttled.replicas`.
 */
export function isThrottledReplica(value: string | undefined, partition: number, brokerId: number): boolean {
  if (value === undefined) return false;
  const v = value.trim();
  if (v === "*") return true;
  const wanted = `${partition}:${brokerId}`;
  return v.split(",").some((entry) => entry.trim() === wanted);
}

/** Stored rates already reported, per logger: the fetchers read the rate on every round. */
const reportedRates = new WeakMap<ClusterLogger, Set<string>>();

/**
 * The rate in bytes/s from the broker config, or undefined (no throttle) when unset.
 *
 * The controller refuses anything but a whole number of bytes/s of at least 1, so a value that is not a
 * positive number (`0`, `-1`, `abc`, `10MB`) can only come from a metadata log written before that check.
 * Such a value is ignored, which is what it always did here (so an upgrade neither stops nor newly throttles
 * mirroring), but not silently: `logger` hears it once per value, telling the operator to set a valid rate
 * or delete the config. A positive number that is not an integer (`1e6`, `1000.5`) is still honoured.
 */
export function throttledRate(
  value: string | undefined,
  logger: ClusterLogger = CONSOLE_LOGGER,
): number | undefined {
  if (value === undefined) return undefined;
  const rate = Number(value);
  if (Number.isFinite(rate) && rate > 0) return rate;
  const reported = reportedRates.get(logger) ?? new Set<string>();
  reportedRates.set(logger, reported);
  if (!reported.has(value)) {
    reported.add(value);
    logger.warn(
      { config: MIRROR_REPLICATION_THROTTLED_RATE, value },
      `ignoring ${MIRROR_REPLICATION_THROTTLED_RATE}='${value}': not a positive number of bytes per second, so mirroring is NOT throttled; set a whole number of bytes per second (at least 1) or delete the config`,
    );
  }
  return undefined;
}

interface Sample {
  start: number;
  bytes: number;
}

/**
 * Kafka's ReplicationQuotaManager for mirror traffic on one destination broker: bytes appended for throttled
 * partitions are recorded in `numWindows` windows of `windowMs`; while the observed rate is above the quota,
 * throttled partitions are left out of fetches. The quota is passed on every check, so a changed
 * `mirror.replication.throttled.rate` applies on the next round.
 */
export class ReplicationQuota {
  private readonly samples: Sample[] = [];
  private readonly numWindows: number;
  private readonly windowMs: number;

  constructor(
    private readonly clock: Clock,
    options: { numWindows?: number; windowMs?: number } = {},
  ) {
    this.numWindows = options.numWindows ?? 11;
    this.windowMs = options.windowMs ?? 1000;
  }

  /** Records bytes appended for throttled partitions. */
  record(bytes: number): void {
    if (bytes <= 0) return;
    const now = this.clock.now();
    const start = now - (now % this.windowMs);
    this.expire(now);
    const last = this.samples[this.samples.length - 1];
    if (last && last.start === start) last.bytes += bytes;
    else this.samples.push({ start, bytes });
  }

  /** Observed rate in bytes/s over the live windows (at least `numWindows - 1` windows long). */
  rate(): number {
    const now = this.clock.now();
    this.expire(now);
    const first = this.samples[0];
    if (!first) return 0;
    const total = this.samples.reduce((sum, s) => sum + s.bytes, 0);
    const spanMs = Math.max(now - first.start, (this.numWindows - 1) * this.windowMs);
    return (total * 1000) / spanMs;
  }

  /** True when the observed rate is above `bytesPerSecond` (never for an undefined quota). */
  isQuotaExceeded(bytesPerSecond: number | undefined): boolean {
    return bytesPerSecond !== undefined && this.rate() > bytesPerSecond;
  }

  private expire(now: number): void {
    const oldest = now - (now % this.windowMs) - (this.numWindows - 1) * this.windowMs;
    while (this.samples.length > 0 && this.samples[0]!.start < oldest) this.samples.shift();
  }
}
