import type { KafkaCluster } from "@cluster-mirror/cluster";
import { currentPartitionViews } from "../metadata/current-partition-views";
import { leaderLog } from "../metadata/destination-logs";
import { compareStrings, mirrorTopics } from "../metadata/mirror-topics";
import type { SourceConnections } from "../metadata/source-connections";
import type { PartitionOffsets } from "../metrics/mirror-metrics";
import type { MirrorCoordinators, MirrorPartitionKey, MirrorPartitionView } from "../ports";
import { answerWithin } from "./deadline";
import type { MirrorDescribeRow } from "./describe-format";

/** What `describeMirrorPartitions` reads. */
export interface DescribeSources {
  destination: KafkaCluster;
  sources: SourceConnections;
  coordinators: Pick<MirrorCoordinators, "describe">;
  offsets?: PartitionOffsets;
}

/**
 * One row per mirror partition (of `mirror`, or all): committed state, source HW, destination LEO, lag,
 * error, retries, LME; sorted by mirror, topic, partition. Partitions of mirror topics with no committed
 * state yet show UNKNOWN. The source offset is the source's answer now (ListOffsets latest), or the fetcher's
 * last-seen high watermark when the source does not answer (null when neither is known; the lag is then
 * null, unknown); the destination offset is its leader's log end now. A STOPPED partition (failed over, its
 * topic writable) has no lag.
 */
export async function describeMirrorPartitions(
  deps: DescribeSources,
  mirror: string | undefined,
  options: { failedOnly?: boolean } = {},
): Promise<MirrorDescribeRow[]> {
  const keys = new Map<string, { key: MirrorPartitionKey; view?: MirrorPartitionView }>();
  const id = (k: MirrorPartitionKey) => `${k.mirror}\u0000${k.topic}\u0000${k.partition}`;
  for (const t of mirrorTopics(deps.destination.controller.image, mirror)) {
    for (let p = 0; p < t.partitionCount; p++) {
      const key = { mirror: t.mirror, topic: t.name, topicId: t.topicId, partition: p };
      keys.set(id(key), { key });
    }
  }
  // One row per partition: the state a previous topic of the name left (failed over, deleted, added
  // again with the source's new id) would otherwise replace the current one's, whichever came last.
  const image = deps.destination.controller.image;
  const views = currentPartitionViews(deps.coordinators.describe(mirror), (t) => image.topic(t)?.topicId);
  for (const v of views) keys.set(id(v.key), { key: v.key, view: v });
  const wanted = [...keys.values()].filter(
    ({ view }) => !options.failedOnly || (view?.state ?? "UNKNOWN") === "FAILED",
  );
  // One ListOffsets per partition, all at once: a network source answers them in one round trip's time.
  const offsets = await Promise.all(wanted.map(({ key }) => offsetsOf(deps, key)));
  const rows: MirrorDescribeRow[] = wanted.map(({ key, view }, i) => {
    const { source, destination, live } = offsets[i]!;
    const state = view?.state ?? "UNKNOWN";
    return {
      mirror: key.mirror,
      topic: key.topic,
      partition: key.partition,
      sourceOffset: source,
      destinationOffset: destination,
      // Lag against a high watermark the source did not just confirm is unknown: the fetcher's last view
      // may predate records the source acknowledged since, and a 0 would call the partition caught up.
      // A STOPPED partition has none: it was failed over, and its log now takes its own writes.
      lag:
        !live || source === null || destination === null || state === "STOPPED"
          ? null
          : source > destination
            ? source - destination
            : 0n,
      state,
      errorMessage: view?.errorMessage ?? null,
      retryAttempt: view?.retryAttempt ?? 0,
      lastMirrorEpoch: view?.lastMirrorEpoch ?? -1,
    };
  });
  return rows.sort(
    (a, b) =>
      compareStrings(a.mirror, b.mirror) || compareStrings(a.topic, b.topic) || a.partition - b.partition,
  );
}

async function offsetsOf(
  deps: DescribeSources,
  key: MirrorPartitionKey,
): Promise<{ source: bigint | null; destination: bigint | null; live: boolean }> {
  // Both ends are read live: the fetcher's last view of the source high watermark is hundreds of ms old,
  // and a lag of 0 computed from it would call a partition caught up while acknowledged records are still
  // only on the source. The fetcher's view stands in only when the source does not answer.
  const destination = leaderLog(deps.destination, key.topic, key.partition)?.logEndOffset ?? null;
  const source = await liveSourceHighWatermark(deps, key);
  if (source !== null) return { source, destination, live: true };
  return { source: deps.offsets?.(key)?.sourceHighWatermark ?? null, destination, live: false };
}

/**
 * How long a live read of the source (describe, the failover preview, paused lags) waits for its answer: a
 * source that hangs (a paused broker) rather than refuses would otherwise hold the call for the client's
 * whole request timeout and retries (90 s seen), past the CLI's own limit.
 */
export const LIVE_SOURCE_ANSWER_MS = 5_000;

/**
 * The source's high watermark of a mirror partition now (ListOffsets latest), or null when the mirror is
 * gone or the source does not answer (within {@link LIVE_SOURCE_ANSWER_MS}). Asked with the mirror topic's id (the source topic's): a topic
 * deleted and created again under the name is another topic, whose offsets say nothing of this copy, so
 * the answer is null then too (no lag, no catch-up barrier measured against it).
 */
export async function liveSourceHighWatermark(
  deps: Pick<DescribeSources, "destination" | "sources">,
  key: Pick<MirrorPartitionKey, "mirror" | "topic" | "partition">,
): Promise<bigint | null> {
  const stored = deps.destination.controller.image.mirrors.get(key.mirror);
  if (!stored) return null;
  try {
    const topicId = deps.destination.controller.image.topic(key.topic)?.topicId;
    return await answerWithin(
      deps.sources.get(key.mirror, stored).listOffsets(key.topic, key.partition, -1n, topicId),
      deps.destination.scheduler,
      LIVE_SOURCE_ANSWER_MS,
      () => new Error(`the source did not answer within ${LIVE_SOURCE_ANSWER_MS} ms`),
    );
  } catch {
    return null;
  }
}
