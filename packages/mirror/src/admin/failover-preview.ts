import type { KafkaCluster } from "@cluster-mirror/cluster";
import { failoverMinLeaderEpoch } from "@cluster-mirror/machines";
import { EmbeddedDestination } from "../destination/embedded-destination";
import { mirrorTopics } from "../metadata/mirror-topics";
import type { SourceConnections } from "../metadata/source-connections";
import { viewsByPartition } from "../metadata/state-driver";
import type { MirrorCoordinators } from "../ports";
import { liveSourceHighWatermark } from "./mirror-describe";
import { selectMirrorTopics } from "./topic-selection";

/** An open transaction a failover would abort (an ABORT marker for its producer). */
export interface PreviewTransaction {
  producerId: bigint;
  producerEpoch: number;
  /** Offset of its first record on the destination. */
  firstOffset: bigint;
}

/** What failing one mirror partition over would do now (`--failover-preview`). */
export interface FailoverPreviewRow {
  topic: string;
  partition: number;
  state: string;
  /** The source's high watermark now (ListOffsets latest), null when the source does not answer. */
  sourceOffset: bigint | null;
  /** The destination leader's log end, null when it has no running leader. */
  destinationOffset: bigint | null;
  /** `sourceOffset - destinationOffset` (at least 0): records a failover now leaves behind; null when unknown. */
  lag: bigint | null;
  /** Open transactions on the destination that STOPPING would abort. */
  openTransactions: PreviewTransaction[];
  /** The last mirrored epoch STOPPING would record (the log's latest epoch while it is a copy of the source). */
  lastMirrorEpoch: number;
  /** The partition's leader epoch now, and after the failover bump (above it and the LME). */
  leaderEpoch: number;
  leaderEpochAfterBump: number;
  /**
   * Records a later failback would truncate on the source (now the old primary): from the destination's log
   * end (the end of the LME's epoch here) to the source's high watermark; null when there are none (or the
   * source's end is unknown, or there is no failback onto the source).
   */
  failbackTruncation: { fromOffset: bigint; records: bigint } | null;
  /** False when the source is a plain Apache Kafka cluster: no failback onto it is possible. */
  failbackSupported: boolean;
}

/** What a preview reads. */
export interface FailoverPreviewDeps {
  destination: KafkaCluster;
  sources: SourceConnections;
  coordinators: Pick<MirrorCoordinators, "describe">;
}

/** States in which the destination log is still a copy of the source (its latest epoch is the LME). */
const ALIGNED = new Set(["MIRRORING", "EPOCH_FENCING", "PAUSING", "PAUSED"]);

/**
 * The dry run of `--remove` for the mirror's topics (mirroring or paused) matching `regex`: one row per
 * partition, sorted by topic and partition, computed from the committed states, the destination leaders'
 * logs and producer states, and the source's live high watermark. Reads only: no log, config, state or
 * epoch changes. UNKNOWN_TOPIC_OR_PARTITION when nothing matches.
 */
export async function previewFailover(
  deps: FailoverPreviewDeps,
  mirror: string,
  regex: string,
): Promise<FailoverPreviewRow[]> {
  const image = deps.destination.controller.image;
  const topics = selectMirrorTopics(mirror, regex, mirrorTopics(image, mirror), ["ACTIVE", "PAUSED"]);
  const views = viewsByPartition(deps.coordinators.describe(mirror), image);
  const destination = new EmbeddedDestination(deps.destination);
  const failbackSupported = canFailBack(deps, mirror);
  const rows: Promise<FailoverPreviewRow>[] = [];
  for (const t of topics) {
    for (let p = 0; p < t.partitionCount; p++) {
      rows.push(
        (async (): Promise<FailoverPreviewRow> => {
          const view = views.get(`${t.name}:${p}`);
          const state = view?.state ?? "UNKNOWN";
          const leaderEpoch = image.partition(t.name, p)?.leaderEpoch ?? -1;
          const leader = destination.leaderOf(t.name, p);
          const replica = leader < 0 ? undefined : destination.replica(leader, t.name, p);
          const destinationOffset = replica?.logEndOffset() ?? null;
          const sourceOffset = await liveSourceHighWatermark(deps, { mirror, topic: t.name, partition: p });
          const lag =
            sourceOffset === null || destinationOffset === null
              ? null
              : sourceOffset > destinationOffset
                ? sourceOffset - destinationOffset
                : 0n;
          const lastMirrorEpoch =
            ALIGNED.has(state) && replica !== undefined
              ? replica.latestEpoch()
              : (view?.lastMirrorEpoch ?? -1);
          return {
            topic: t.name,
            partition: p,
            state,
            sourceOffset,
            destinationOffset,
            lag,
            openTransactions: (replica?.ongoingTransactions() ?? []).map((x) => ({ ...x })),
            lastMirrorEpoch,
            leaderEpoch,
            // The controller's bump: max(epoch + 1, min), and min is above both.
            leaderEpochAfterBump: failoverMinLeaderEpoch(lastMirrorEpoch, leaderEpoch),
            failbackTruncation:
              failbackSupported && lag !== null && lag > 0n && destinationOffset !== null
                ? { fromOffset: destinationOffset, records: lag }
                : null,
            failbackSupported,
          };
        })(),
      );
    }
  }
  return Promise.all(rows);
}

/**
 * Whether a failback onto the mirror's source is possible. A source that cannot be reached now (not
 * registered, a TLS file gone) answers yes: the preview's rows still come, with unknown lags, as before.
 */
function canFailBack(deps: FailoverPreviewDeps, mirror: string): boolean {
  const configs = deps.destination.controller.image.mirrors.get(mirror);
  if (configs === undefined) return true;
  try {
    return deps.sources.get(mirror, configs).canFailBack?.() ?? true;
  } catch {
    return true;
  }
}
