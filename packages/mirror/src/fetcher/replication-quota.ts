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
  // By number, as Kafka's ConfigHandler parses each entry (`toInt`): `00:01` is partition 0 on broker 1.
  return v.split(",").some((entry) => {
    const match = /^(\d+):(\d+)$/.exec(entry.trim());
    return match !== null && Number(match[1]) === partition && Number(match[2]) === brokerId;
  });
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

/** One sample window of Kafka's `SampledStat`: it starts where its first event (or a reset) fell. */
interface Sample {
  start: number;
  lastEvent: number;
  bytes: number;
}

/**
 * Kafka's ReplicationQuotaManager for mirror traffic on one destination broker: bytes appended for throttled
 * partitions are recorded in up to `numWindows` samples of `windowMs` (Kafka's
 * `replication.quota.window.num`, default 11, and `replication.quota.window.size.seconds`, default 1); while
 * the observed rate is above the quota, throttled partitions are left out of fetches. The quota is passed on every check, so a changed
 * `mirror.replication.throttled.rate` applies on the next round.
 *
 * The rate is Kafka's `SimpleRate` over a `SampledStat`, as the replication quotas measure it: the bytes of
 * the live samples over the time since the oldest one started, at least one window. (Not the client quotas'
 * `Rate`, which divides by at least `numWindows - 1` windows: that would let a throttle that starts, or
 * comes back after 11 idle seconds, pass ten times its rate at once and then stall for ten seconds.)
 */
export class ReplicationQuota {
  /** A ring of `numWindows + 1` samples, as Kafka's (one extra for the sample overlapping the span). */
  private readonly samples: Sample[] = [];
  private current = 0;
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
    let sample = this.currentSample(now);
    if (now - sample.start >= this.windowMs) sample = this.advance(now);
    sample.bytes += bytes;
    sample.lastEvent = now;
  }

  /**
   * Observed rate in bytes/s: the live samples' bytes (plus `pendingBytes` not recorded yet) over the time
   * since the oldest sample started, at least one window.
   */
  rate(pendingBytes = 0): number {
    const now = this.clock.now();
    this.purgeObsolete(now);
    if (this.samples.length === 0) this.samples.push(newSample(now));
    let total = pendingBytes;
    let oldest = now;
    for (const s of this.samples) {
      total += s.bytes;
      if (s.start < oldest) oldest = s.start;
    }
    return (total * 1000) / Math.max(now - oldest, this.windowMs);
  }

  /**
   * True when the observed rate (with `pendingBytes` about to be recorded) is above `bytesPerSecond`; never
   * for an undefined quota.
   */
  isQuotaExceeded(bytesPerSecond: number | undefined, pendingBytes = 0): boolean {
    return bytesPerSecond !== undefined && this.rate(pendingBytes) > bytesPerSecond;
  }

  private currentSample(now: number): Sample {
    if (this.samples.length === 0) this.samples.push(newSample(now));
    return this.samples[this.current]!;
  }

  private advance(now: number): Sample {
    this.current = (this.current + 1) % (this.numWindows + 1);
    if (this.current >= this.samples.length) {
      const sample = newSample(now);
      this.samples.push(sample);
      return sample;
    }
    const sample = this.samples[this.current]!;
    resetSample(sample, now);
    return sample;
  }

  /** Kafka's `purgeObsoleteSamples`: a sample without an event for `numWindows` windows starts over now. */
  private purgeObsolete(now: number): void {
    const expireAge = this.numWindows * this.windowMs;
    for (const s of this.samples) if (now - s.lastEvent >= expireAge) resetSample(s, now);
  }
}

function newSample(now: number): Sample {
  return { start: now, lastEvent: now, bytes: 0 };
}

function resetSample(sample: Sample, now: number): void {
  sample.start = now;
  sample.lastEvent = now;
  sample.bytes = 0;
}
