/**
 * What one request to the node's admin endpoint may ask for, so that a single command cannot take the node
 * down (a topic with 100,000,000 partitions, a million messages built in memory at once).
 */
export interface RequestLimits {
  /** Largest request body in bytes (HTTP 413 above it). */
  bodyLimitBytes: number;
  /** Most messages one produce request may write (`--count`). */
  maxProduceCount: number;
  /** Most partitions one create-topic request may create. */
  maxPartitionsPerRequest: number;
  /** Most partitions, all topics together, one cluster of the node may have after a create-topic. */
  maxPartitionsPerCluster: number;
}

/** The defaults: 1 MiB bodies, 100,000 messages, 1,000 partitions per request, 20,000 per cluster. */
export const DEFAULT_REQUEST_LIMITS: Readonly<RequestLimits> = {
  bodyLimitBytes: 1_048_576,
  maxProduceCount: 100_000,
  maxPartitionsPerRequest: 1_000,
  maxPartitionsPerCluster: 20_000,
};
