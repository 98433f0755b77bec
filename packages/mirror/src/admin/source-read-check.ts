import type { Uuid } from "@cluster-mirror/cluster";
import type { KafkaError } from "@cluster-mirror/protocol";
import type { SourceCluster } from "../ports";

/**
 * Whether the source refuses the mirror's principal READ on `topic`: an `*_AUTHORIZATION_FAILED` error, or
 * undefined when it reads, or when the probe tells nothing (no leader, a broker down, any other answer;
 * the retry deals with those as it always does).
 *
 * Kafka's ListOffsets needs only DESCRIBE, so a principal denied READ alone still lists offsets; only a
 * Fetch asks for READ. The probe fetches partition `partition` at `fetchOffset` (its high watermark, so no
 * records come back) under its own client id, so a fetcher's fetch session is left alone, and sessionless,
 * so it opens none of its own that the source would hold after the recover.
 */
export async function sourceRefusesRead(
  source: SourceCluster,
  mirror: string,
  topic: string,
  topicId: Uuid,
  partition: number,
  fetchOffset: bigint,
): Promise<KafkaError | undefined> {
  try {
    const leader = (await source.partitionLeaders([topic])).find((p) => p.partition === partition);
    if (leader === undefined || leader.leaderId < 0) return undefined;
    const { partitions } = await source.fetch({
      clientId: `cluster-mirror-${mirror}-recover`,
      brokerId: leader.leaderId,
      maxBytes: 1,
      sessionless: true,
      partitions: [
        {
          topic,
          partition,
          fetchOffset,
          lastFetchedEpoch: -1,
          currentLeaderEpoch: -1,
          maxBytes: 1,
          topicId,
        },
      ],
    });
    const error = partitions[0]?.error;
    return error?.errorName.endsWith("_AUTHORIZATION_FAILED") ? error : undefined;
  } catch {
    // Inconclusive (a broker down or moved): the checks before this one found the source answering.
    return undefined;
  }
}
