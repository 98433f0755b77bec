import { shownValue } from "@cluster-mirror/cluster";
import type { MirrorFetcherConfig } from "./mirror-fetcher-manager";

/** The fetch settings a library user may pass (`ClusterMirroring.start({ fetch })`). */
type FetchOptions = Partial<Omit<MirrorFetcherConfig, "numFetchers">>;

/** Sizes that must be at least one byte: 0 would fetch nothing, ever, from an embedded source. */
const SIZES = [
  ["maxBytes", "fetch.response.max.bytes: the response size limit over all partitions"],
  ["partitionMaxBytes", "fetch.max.bytes: the per-partition limit"],
] as const;

/** Waits in milliseconds: 0 or more (a negative wait is taken as none by timers, hiding a typo). */
const WAITS = [
  ["backoffMs", "fetch.backoff.ms"],
  ["backoffMaxMs", "the largest backoff"],
  ["fetchWaitMaxMs", "fetch.wait.max.ms"],
] as const;

/**
 * What is wrong with `fetch`, or undefined when every given setting is usable: sizes whole numbers of
 * bytes from 1, waits whole numbers of milliseconds from 0.
 */
export function fetchOptionsProblem(fetch: FetchOptions | undefined): string | undefined {
  if (fetch === undefined) return undefined;
  for (const [name, what] of SIZES) {
    const v = fetch[name];
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 1))
      return `fetch.${name} (${what}) must be a whole number of bytes, at least 1, got ${shownValue(v)}; leave it out for the default`;
  }
  for (const [name, what] of WAITS) {
    const v = fetch[name];
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 0))
      return `fetch.${name} (${what}) must be a whole number of milliseconds, 0 or more, got ${shownValue(v)}; leave it out for the default`;
  }
  return undefined;
}
