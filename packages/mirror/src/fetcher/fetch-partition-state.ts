import type { Cancel } from "@cluster-mirror/cluster";
import type { MirrorPartitionKey, SourceLogRewrite } from "../ports";

/**
 * What the fetcher manager and the fetchers know of one mirror partition on this destination broker.
 * Mutable, owned by the manager; a fetcher only touches the partitions assigned to it.
 */
export interface FetchPartitionState {
  readonly key: MirrorPartitionKey;
  /** The id the fetcher chart uses: `topic-partition` (unique within one mirror's fetchers). */
  readonly id: string;
  /** The source topic-partition (the same name and index as the mirror topic's by default). */
  readonly source: { readonly topic: string; readonly partition: number };
  /** False once `removePartition` was called (until `addPartition` again). */
  wanted: boolean;
  /** Bumped on every `addPartition`, so a late asynchronous step of an older assignment does nothing. */
  generation: number;
  /** The source leader and epoch the partition is fetched with (-1: unknown). */
  sourceLeaderId: number;
  sourceLeaderEpoch: number;
  /** The fetcher that owns it, or undefined while it is routed, waiting, failed or removed. */
  fetcher: { remove(ids: readonly string[]): void } | undefined;
  /** True while a REMOVE_PARTITIONS waits for the in-flight fetch. */
  removing: boolean;
  /** True while the source metadata is refreshed for it, or a delayed re-route is scheduled. */
  routing: boolean;
  rerouteCancel: Cancel | undefined;
  /** EPOCH_FENCING (`holdAppends`): fetched batches are not appended until `releaseAppends`. */
  held: boolean;
  /** The offset (or byte position) of a batch that failed validation once: failing again fails the partition. */
  corruptAt: string | undefined;
  /** Why the partition failed, for `FetcherEvents.partitionFailed` (the source's error name, if it answered one). */
  failure: { message: string; retryable: boolean; errorName?: string } | undefined;
  /** The source's diverging epoch from the last response (exact bigint end offset). */
  diverging: { epoch: number; endOffset: bigint } | undefined;
  /** The OFFSET_OUT_OF_RANGE answer: where we fetched and the source's log start (-1 when unknown). */
  outOfRange: { fetchOffset: bigint; logStartOffset: bigint } | undefined;
  /** The last diverging-epoch or OFFSET_OUT_OF_RANGE answer handled, until records are appended again. */
  lastTruncationAnswer: string | undefined;
  /**
   * The newest of the source's log rewrites (`SourceFetchPartitionResult.logRewrites`) the local log was
   * compared with, -1 before the first: reset on every `addPartition`, so each assignment compares once.
   */
  checkedLogRewrite: number;
  /** The source's log rewrites to compare the local log with before fetching again (set by a response). */
  logRewriteCheck: { rewrites: readonly SourceLogRewrite[]; newestId: number } | undefined;
  /**
   * Where the last comparison of the rewrites up to `newestId` stopped because the source held nothing
   * further yet: everything below agreed, and the next comparison of the same rewrites starts there.
   */
  logRewriteComparedTo: { newestId: number; offset: bigint } | undefined;
  /** Lag inputs (spec §4): -1 until the first answer. */
  sourceHighWatermark: bigint;
  destinationLogEndOffset: bigint;
  bytesMirrored: number;
  batchesMirrored: number;
  /**
   * `batchesMirrored` when the partition was last added: a failure after the assignment appended more is a
   * new incident, not its retry failing again (`FetcherEvents.partitionFailed`'s `afterProgress`). -1 when
   * the leadership moved here while the partition mirrors (any failure is then a new incident).
   */
  batchesAtAdd: number;
  /** Resolvers of `removePartition` calls waiting for the in-flight fetch. */
  removeWaiters: (() => void)[];
}

/** A fresh state for a partition. */
export function newFetchPartitionState(
  key: MirrorPartitionKey,
  source: { topic: string; partition: number },
): FetchPartitionState {
  return {
    key,
    id: `${key.topic}-${key.partition}`,
    source,
    wanted: false,
    generation: 0,
    sourceLeaderId: -1,
    sourceLeaderEpoch: -1,
    fetcher: undefined,
    removing: false,
    routing: false,
    rerouteCancel: undefined,
    held: false,
    corruptAt: undefined,
    failure: undefined,
    diverging: undefined,
    outOfRange: undefined,
    lastTruncationAnswer: undefined,
    checkedLogRewrite: -1,
    logRewriteCheck: undefined,
    logRewriteComparedTo: undefined,
    sourceHighWatermark: -1n,
    destinationLogEndOffset: -1n,
    bytesMirrored: 0,
    batchesMirrored: 0,
    batchesAtAdd: 0,
    removeWaiters: [],
  };
}
