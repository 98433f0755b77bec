/** What a partitioner sees of one partition. */
export interface PartitionInfo {
  partitionId: number;
  /** -1 when the partition has no leader. */
  leader: number;
}

/** kafkajs's partitioner signature. */
export type Partitioner = (args: {
  topic: string;
  partitionMetadata: readonly PartitionInfo[];
  message: { key?: Buffer | string | null; partition?: number };
}) => number;

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/**
 * Kafka's murmur2 (`org.apache.kafka.common.utils.Utils.murmur2`), as a signed 32-bit int. The Java
 * client's default partitioner, and kafkajs's `DefaultPartitioner`, place a keyed record on
 * `toPositive(murmur2(key)) % numPartitions`.
 */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (SEED ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const tail = length & ~3;
  // Java's switch falls through from the highest remaining byte down.
  const rest = length % 4;
  if (rest >= 3) h ^= data[tail + 2]! << 16;
  if (rest >= 2) h ^= data[tail + 1]! << 8;
  if (rest >= 1) {
    h ^= data[tail]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's `Utils.toPositive`: clears the sign bit. */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

/**
 * The Java-compatible default partitioner (kafkajs's `Partitioners.DefaultPartitioner`): an explicit
 * partition wins; a key hashes with murmur2 over all partitions; no key goes round-robin over the
 * partitions that have a leader. The round-robin counter starts at 0 (kafkajs starts at a random value), so
 * runs repeat.
 */
export function createDefaultPartitioner(): Partitioner {
  let counter = 0;
  return ({ partitionMetadata, message }) => {
    const numPartitions = partitionMetadata.length;
    if (message.partition !== undefined && message.partition !== null) return message.partition;
    const key = message.key;
    if (key !== undefined && key !== null) {
      const bytes = typeof key === "string" ? Buffer.from(key) : key;
      return toPositive(murmur2(bytes)) % numPartitions;
    }
    const available = partitionMetadata.filter((p) => p.leader >= 0);
    const pick = counter++;
    if (available.length > 0) return available[pick % available.length]!.partitionId;
    return toPositive(pick) % numPartitions;
  };
}
