import type { MirrorPartitionKey } from "../ports";

/** One mirror partition's fetch figures on this destination broker. */
export interface PartitionFetchMetrics {
  key: MirrorPartitionKey;
  /** Bytes and batches appended as-is since the partition was added to this manager. */
  bytesMirrored: number;
  batchesMirrored: number;
  /** The source high watermark from the last answer (-1 before one). */
  sourceHighWatermark: bigint;
  /** The destination log end offset after the last append or truncation (-1 before one). */
  destinationLogEndOffset: bigint;
  /** Spec §4: source high watermark - destination log end offset (-1 when not known yet). */
  lag: bigint;
  /** True while appends are held (EPOCH_FENCING). */
  held: boolean;
}

/** One fetcher: its client id, source broker, index, chart state and partitions. */
export interface FetcherThreadMetrics {
  clientId: string;
  mirror: string;
  sourceBrokerId: number;
  index: number;
  /**
   * The fetcher chart state: idle (nothing assigned), fetching, waiting (the last round brought nothing),
   * throttled (a quota holds the next fetch back), backingOff (a whole fetch failed), stopped.
   */
  state: string;
  partitions: string[];
}

/** What `MirrorFetcherManager.metrics()` returns. */
export interface FetcherMetrics {
  /** Totals over every partition this manager has mirrored. */
  bytesMirrored: number;
  batchesMirrored: number;
  partitions: PartitionFetchMetrics[];
  fetchers: FetcherThreadMetrics[];
}
