import type { KafkaCluster } from "@cluster-mirror/cluster";
import { leaderLog } from "../metadata/destination-logs";
import { compareStrings, mirrorTopics } from "../metadata/mirror-topics";
import type { SourceConnections } from "../metadata/source-connections";
import type { PartitionOffsets } from "../metrics/mirror-metrics";
import type { MirrorCoordinators, MirrorPartitionKey, MirrorPartitionView } from "../ports";
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
 * state yet show UNKNOWN. Offsets come from the fetchers when they know the partition, else from the source
 * (ListOffsets latest; null when it does not answer) and the destination leader's log end.
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
  for (const v of deps.coordinators.describe(mirror)) keys.set(id(v.key), { key: v.key, view: v });
  const rows: MirrorDescribeRow[] = [];
  for (const { key, view } of keys.values()) {
    const state = view?.state ?? "UNKNOWN";
    if (options.failedOnly && state !== "FAILED") continue;
    const { source, destination } = await offsetsOf(deps, key);
    rows.push({
      mirror: key.mirror,
      topic: key.topic,
      partition: key.partition,
      sourceOffset: source,
      destinationOffset: destination,
      lag: source === null || destination === null ? null : source > destination ? source - destination : 0n,
      state,
      errorMessage: view?.errorMessage ?? null,
      retryAttempt: view?.retryAttempt ?? 0,
      lastMirrorEpoch: view?.lastMirrorEpoch ?? -1,
    });
  }
  return rows.sort(
    (a, b) =>
      compareStrings(a.mirror, b.mirror) || compareStrings(a.topic, b.topic) || a.partition - b.partition,
  );
}

async function offsetsOf(
  deps: DescribeSources,
  key: MirrorPartitionKey,
): Promise<{ source: bigint | null; destination: bigint | null }> {
  // The destination's log end is read live from its leader; the fetcher's last view of the source high
  // watermark saves a round trip to the source when there is one.
  const destination = leaderLog(deps.destination, key.topic, key.partition)?.logEndOffset ?? null;
  const known = deps.offsets?.(key);
  if (known) return { source: known.sourceHighWatermark, destination };
  const stored = deps.destination.controller.image.mirrors.get(key.mirror);
  if (!stored) return { source: null, destination };
  try {
    const source = await deps.sources.get(key.mirror, stored).listOffsets(key.topic, key.partition, -1n);
    return { source, destination };
  } catch {
    return { source: null, destination };
  }
}
