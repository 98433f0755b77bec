import type { KafkaCluster } from "@cluster-mirror/cluster";
import { failoverMinLeaderEpoch } from "@cluster-mirror/machines";
import { EmbeddedDestination } from "../destination/embedded-destination";
import { isLive } from "../destination/live-transactions";
import { mirrorTopics } from "../metadata/mirror-topics";
import type { SourceConnections } from "../metadata/source-connections";
import { viewsByPartition } from "../metadata/state-driver";
import type { FailoverPlan, LocalReplica, MirrorCoordinators } from "../ports";
import { answerWithin } from "./deadline";
import { LIVE_SOURCE_ANSWER_MS, liveSourceHighWatermark } from "./mirror-describe";
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
  /**
   * The destination leader's log end, null when it has no running leader: the failover then waits for one,
   * and what it reads from the log (open transactions, LME, bump, failback cut) is unknown until then.
   */
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
   * Records a later failback would truncate on the source (now the old primary): from the end of the LME's
   * epoch here (the destination's log end while it is a copy of the source; the source's log start when
   * the LME is -1) to the source's high watermark; null when there are none (or the source's end is
   * unknown, or there is no failback onto the source).
   */
  failbackTruncation: { fromOffset: bigint; records: bigint } | null;
  /** False when the source is a plain Apache Kafka cluster: no failback onto it is possible. */
  failbackSupported: boolean;
}

/** What a preview reads. */
export interface FailoverPreviewDeps {
  destination: KafkaCluster;
  sources: SourceConnections;
  coordinators: Pick<MirrorCoordinators, "describe" | "failoverPlan">;
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
          // As STOPPING captures it: the log's latest epoch while the log is a copy of the source, else the
          // LME kept from before. The actor knows which (a FAILED partition, or a PREPARING one, may hold a
          // copy or not); the committed state is the guess when it does not answer.
          const plan = view === undefined ? undefined : deps.coordinators.failoverPlan?.(view.key);
          const aligned = plan === undefined ? ALIGNED.has(state) : plan.aligned;
          const keptLme = plan?.lastMirrorEpoch ?? view?.lastMirrorEpoch ?? -1;
          const lastMirrorEpoch = aligned && replica !== undefined ? replica.latestEpoch() : keptLme;
          return {
            topic: t.name,
            partition: p,
            state,
            sourceOffset,
            destinationOffset,
            lag,
            openTransactions: abortedTransactions(destination, replica, t.name, p, {
              holdsMirroredData:
                plan === undefined ||
                plan.holdsMirroredData ||
                cutSeenAtFailover(plan, replica?.latestEpoch()),
            }),
            lastMirrorEpoch,
            leaderEpoch,
            // The controller's bump: max(epoch + 1, min). The actor computes min from the local epoch it
            // knows, which a leader election while no fetcher ran (PAUSED) leaves behind the current one.
            leaderEpochAfterBump: Math.max(
              leaderEpoch + 1,
              failoverMinLeaderEpoch(lastMirrorEpoch, plan?.localLeaderEpoch ?? leaderEpoch),
            ),
            failbackTruncation:
              failbackSupported && sourceOffset !== null && replica !== undefined
                ? await failbackTruncation(deps, { mirror, topic: t.name, partition: p }, replica, {
                    lastMirrorEpoch,
                    sourceOffset,
                  })
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
 * What a failback onto the source (PREPARING there, asking this cluster for the LME this failover records)
 * truncates of the source's log, as its truncation cuts: at the end of epoch LME on the source's own log,
 * or earlier where this log's copy of it ends (KIP-320's divergence check), up to the source's high
 * watermark. The source's end reaches past this log's end when a leader elected there without the last
 * mirrored batches wrote in a new epoch (an unclean election): the failback drops those writes. This log's
 * end of epoch LME is behind its log end when local writes followed an earlier failover (a re-add stopped
 * before its truncation). LME -1, or an epoch the source never had: the failback truncates fully, from the
 * source's log start (0 when the source does not say). Null when nothing goes.
 */
async function failbackTruncation(
  deps: FailoverPreviewDeps,
  key: { mirror: string; topic: string; partition: number },
  replica: LocalReplica,
  failover: { lastMirrorEpoch: number; sourceOffset: bigint },
): Promise<{ fromOffset: bigint; records: bigint } | null> {
  const lme = failover.lastMirrorEpoch;
  const here = lme < 0 ? undefined : replica.endOffsetForEpoch(lme);
  // The source's own end of epoch LME; unknown (it does not answer): this log's end of it, as before.
  const theirs = lme < 0 ? null : await sourceEndOffsetForEpoch(deps, key, lme);
  let fromOffset: bigint;
  if (here === undefined || (theirs !== null && (theirs.leaderEpoch < 0 || theirs.endOffset < 0n))) {
    fromOffset = await sourceLogStart(deps, key);
  } else {
    const candidates = [here.endOffset, replica.logEndOffset()];
    if (theirs !== null) {
      candidates.push(theirs.endOffset);
      // The source's end of the latest epoch this log knows at most LME (where the copies part).
      if (here.epoch >= 0 && here.epoch !== lme) {
        const own = await sourceEndOffsetForEpoch(deps, key, here.epoch);
        if (own !== null && own.endOffset >= 0n) candidates.push(own.endOffset);
      }
    }
    fromOffset = candidates.filter((o) => o >= 0n).reduce((a, b) => (b < a ? b : a));
  }
  return failover.sourceOffset > fromOffset
    ? { fromOffset, records: failover.sourceOffset - fromOffset }
    : null;
}

/** The source's answer to OffsetsForLeaderEpoch for `epoch`, null when it does not answer. */
async function sourceEndOffsetForEpoch(
  deps: FailoverPreviewDeps,
  key: { mirror: string; topic: string; partition: number },
  epoch: number,
): Promise<{ leaderEpoch: number; endOffset: bigint } | null> {
  const image = deps.destination.controller.image;
  const stored = image.mirrors.get(key.mirror);
  if (stored === undefined) return null;
  try {
    return await answerWithin(
      deps.sources
        .get(key.mirror, stored)
        .endOffsetForEpoch(key.topic, key.partition, epoch, image.topic(key.topic)?.topicId),
      deps.destination.scheduler,
      LIVE_SOURCE_ANSWER_MS,
      () => new Error(`the source did not answer within ${LIVE_SOURCE_ANSWER_MS} ms`),
    );
  } catch {
    return null;
  }
}

/** The source's log start offset now (ListOffsets earliest), 0 when it does not answer. */
async function sourceLogStart(
  deps: FailoverPreviewDeps,
  key: { mirror: string; topic: string; partition: number },
): Promise<bigint> {
  const image = deps.destination.controller.image;
  const stored = image.mirrors.get(key.mirror);
  if (stored === undefined) return 0n;
  try {
    return await answerWithin(
      deps.sources
        .get(key.mirror, stored)
        .listOffsets(key.topic, key.partition, -2n, image.topic(key.topic)?.topicId),
      deps.destination.scheduler,
      LIVE_SOURCE_ANSWER_MS,
      () => new Error(`the source did not answer within ${LIVE_SOURCE_ANSWER_MS} ms`),
    );
  } catch {
    return 0n;
  }
}

/**
 * The open transactions STOPPING step 3 aborts: every one on a log holding mirrored data (its producer
 * state is the source's); otherwise only the hanging ones (KIP-664: no transaction coordinator here will
 * end them), and a live local transaction is left to its producer.
 */
function abortedTransactions(
  destination: EmbeddedDestination,
  replica: LocalReplica | undefined,
  topic: string,
  partition: number,
  failover: { holdsMirroredData: boolean },
): PreviewTransaction[] {
  const open = (replica?.ongoingTransactions() ?? []).map((x) => ({ ...x }));
  if (failover.holdsMirroredData) return open;
  const live = destination.liveTransactions(topic, partition);
  return open.filter((txn) => !isLive(live, txn));
}

/**
 * As the failover reads a log recorded as the topic's own (a re-add before its truncation) once its
 * fetcher is gone: a latest epoch at or below the LME kept from the earlier failover means the
 * truncation cut the log though no record says so, and the log holds the source's producer state.
 */
function cutSeenAtFailover(plan: FailoverPlan, logLatestEpoch: number | undefined): boolean {
  return (
    !plan.aligned &&
    plan.lastMirrorEpoch >= 0 &&
    logLatestEpoch !== undefined &&
    logLatestEpoch <= plan.lastMirrorEpoch
  );
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
