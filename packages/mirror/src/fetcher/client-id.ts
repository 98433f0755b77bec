/**
 * The deterministic client id of a mirror fetcher (spec §8), so that the source cluster's per-client-id
 * fetch byte-rate quotas can throttle one mirror on one destination broker:
 *
 * `cluster-mirror-${mirror}-broker-${destinationBrokerId}-fetcher-${fetcherIndex}`
 *
 * e.g. `cluster-mirror-us-east-broker-2-fetcher-0`. The id does not name the source broker: a fetcher index
 * on one destination broker presents the same id to every source broker, as Kafka clients do.
 */
export function mirrorFetcherClientId(
  mirror: string,
  destinationBrokerId: number,
  fetcherIndex: number,
): string {
  return `cluster-mirror-${mirror}-broker-${destinationBrokerId}-fetcher-${fetcherIndex}`;
}

/**
 * The fetcher index of a partition, as Kafka's `AbstractFetcherManager.getFetcherId`:
 * `abs(31 * topic.hashCode + partition) % numFetchers`, with Java's `String.hashCode`.
 */
export function fetcherIndexFor(topic: string, partition: number, numFetchers: number): number {
  if (numFetchers <= 1) return 0;
  let h = 0;
  for (let i = 0; i < topic.length; i++) h = (Math.imul(31, h) + topic.charCodeAt(i)) | 0;
  const n = (Math.imul(31, h) + partition) | 0;
  // Kafka's Utils.abs: the absolute value, 0 for Integer.MIN_VALUE (not the low 31 bits).
  return (n === -2147483648 ? 0 : Math.abs(n)) % numFetchers;
}
