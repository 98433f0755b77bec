import { LIFECYCLE_STATES } from "@cluster-mirror/machines";
import { currentPartitionViews } from "../metadata/current-partition-views";
import { compareStrings } from "../metadata/mirror-topics";
import type { MirrorCoordinators, MirrorPartitionKey, MirrorPartitionView } from "../ports";
import { type PrometheusFamily, renderPrometheus } from "./prometheus";

/**
 * Kinds of metadata-sync errors, named after the POC's `MirrorMetadataManager` meters (anchors §1.11);
 * `MirrorStateCommandError` is ours (a command to a partition actor failed for a reason other than a race).
 */
export type SyncErrorKind =
  | "TopicMetadataRefreshError"
  | "TopicConfigSyncError"
  | "ConsumerGroupOffsetSyncError"
  | "AclSyncError"
  | "MirrorStateCommandError";

/** Source high watermark and destination log end offset of a partition (FetcherManager.offsets). */
export type PartitionOffsets = (
  key: MirrorPartitionKey,
) => { sourceHighWatermark: bigint; destinationLogEndOffset: bigint } | undefined;

/** Where the metrics read committed partition states and fetch positions. */
export interface MirrorMetricsOptions {
  coordinators: Pick<MirrorCoordinators, "describe">;
  /** Lag per partition; usually `fetcherManager.offsets.bind(fetcherManager)`. */
  offsets?: PartitionOffsets;
  /**
   * The destination leader's log end offset of a partition now: the lag of a PAUSED partition (no fetcher
   * runs for it) is the source's high watermark minus this.
   */
  destinationLogEndOffset?: (key: MirrorPartitionKey) => bigint | undefined;
  /** The source's high watermark now (ListOffsets latest), null when it does not answer. */
  liveSourceHighWatermark?: (key: MirrorPartitionKey) => Promise<bigint | null>;
  /**
   * The id of the destination's topic of that name now (undefined when it has none): the state of a
   * previous topic of the name (failed over, deleted, added again with the source's new id) is not counted.
   */
  destinationTopicId?: (topic: string) => string | undefined;
}

/**
 * Lifecycle states without a fetcher whose lag is still reported, from the source's high watermark asked
 * live against the destination's log end now. A FAILED partition's fetcher may keep its last view, but
 * that view froze when the partition failed while the source goes on growing.
 */
const LAG_WITHOUT_FETCHER_STATES = new Set(["PAUSED", "FAILED"]);

/**
 * Metric names (Prometheus; JMX-style POC names in parentheses):
 * - `kafka_server_cluster_mirror_partition_count{mirror,state}` gauge: partitions per lifecycle state, every
 *   state listed (`MirroringPartitionState`, `PausedPartitionState`, ... `FailedPartitionState`).
 * - `kafka_server_cluster_mirror_topic_count{mirror}` gauge (`MirrorTopicCount`).
 * - `kafka_server_cluster_mirror_lag{mirror,topic,partition}` gauge: source HW - destination LEO, for the
 *   partitions the fetchers know (`FetcherLagMetrics`) and for PAUSED and FAILED ones (the source HW last
 *   seen by a fetcher or a live ListOffsets, against the destination's log end now; a FAILED one only while
 *   the source answers).
 * - `kafka_server_cluster_mirror_sync_errors_total{mirror,kind}` counter, `kind` one of {@link SyncErrorKind}
 *   (`TopicMetadataRefreshError`, `TopicConfigSyncError`, `ConsumerGroupOffsetSyncError`, `AclSyncError`).
 * - `kafka_server_cluster_mirror_bytes_total{mirror,topic}` and `..._batches_total{mirror,topic}` counters:
 *   what the fetchers appended (`ReplicationBytesInPerSec`).
 * - `kafka_server_cluster_mirror_fetch_errors_total{mirror}` counter: fetches and fetcher leader lookups
 *   the source did not answer (refused, lost, timed out) and partitions that failed. The lag gauge keeps the source high watermark
 *   last seen, so a source that went away shows here, not there: alert on its rate.
 */
export const MIRROR_METRIC_NAMES = {
  partitionCount: "kafka_server_cluster_mirror_partition_count",
  topicCount: "kafka_server_cluster_mirror_topic_count",
  lag: "kafka_server_cluster_mirror_lag",
  syncErrors: "kafka_server_cluster_mirror_sync_errors_total",
  bytes: "kafka_server_cluster_mirror_bytes_total",
  batches: "kafka_server_cluster_mirror_batches_total",
  fetchErrors: "kafka_server_cluster_mirror_fetch_errors_total",
} as const;

/**
 * The mirroring engine's metrics. States and lag are read live from the coordinators and fetchers when
 * asked; sync errors and mirrored bytes/batches are counted as they are reported.
 */
export class MirrorMetrics {
  private readonly options: MirrorMetricsOptions;
  private readonly errors = new Map<string, number>();
  private readonly fetchErrors = new Map<string, number>();
  private readonly mirrored = new Map<string, { bytes: bigint; batches: bigint }>();
  /** The source high watermark last seen per partition (`mirror\0topicId\0partition`). */
  private readonly lastSourceHw = new Map<string, bigint>();
  /** Live source queries in flight (one per partition at a time). */
  private readonly asking = new Map<string, Promise<void>>();

  constructor(options: MirrorMetricsOptions) {
    this.options = options;
  }

  /** The committed views of the partitions that exist now (no state of a previous topic of a name). */
  private views(): MirrorPartitionView[] {
    const views = this.options.coordinators.describe();
    const topicId = this.options.destinationTopicId;
    return topicId ? currentPartitionViews(views, topicId) : views;
  }

  /** Counts one metadata-sync error of a mirror. */
  recordSyncError(mirror: string, kind: SyncErrorKind): void {
    const key = `${mirror}\u0000${kind}`;
    this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
  }

  /** Counts a fetch or leader lookup of a mirror the source did not answer, or a partition that failed. */
  recordFetchError(mirror: string): void {
    this.fetchErrors.set(mirror, (this.fetchErrors.get(mirror) ?? 0) + 1);
  }

  /**
   * Drops every count and last-seen offset of a deleted mirror, so its series leave the exposition (a
   * mirror created again under the name starts from zero, as a restarted process would).
   */
  forgetMirror(mirror: string): void {
    this.fetchErrors.delete(mirror);
    const prefix = `${mirror}\u0000`;
    // A live query still running for the mirror is forgotten too: its late answer is dropped (askSource).
    for (const map of [this.errors, this.mirrored, this.lastSourceHw, this.asking] as Map<
      string,
      unknown
    >[]) {
      for (const key of [...map.keys()]) if (key.startsWith(prefix)) map.delete(key);
    }
  }

  /** Fetch error counts per mirror, sorted by mirror. */
  fetchErrorCounts(): { mirror: string; count: number }[] {
    return [...this.fetchErrors]
      .map(([mirror, count]) => ({ mirror, count }))
      .sort((a, b) => compareStrings(a.mirror, b.mirror));
  }

  /** Sync error counts, sorted by mirror then kind. */
  syncErrors(mirror?: string): { mirror: string; kind: SyncErrorKind; count: number }[] {
    return [...this.errors]
      .map(([key, count]) => {
        const [m, kind] = key.split("\u0000") as [string, SyncErrorKind];
        return { mirror: m, kind, count };
      })
      .filter((e) => mirror === undefined || e.mirror === mirror)
      .sort((a, b) => compareStrings(a.mirror, b.mirror) || compareStrings(a.kind, b.kind));
  }

  /** The fetcher side's callback: `batches` batches of `bytes` bytes were appended for `key`. */
  recordMirrored(key: MirrorPartitionKey, bytes: number, batches: number): void {
    const k = `${key.mirror}\u0000${key.topic}`;
    const total = this.mirrored.get(k) ?? { bytes: 0n, batches: 0n };
    total.bytes += BigInt(bytes);
    total.batches += BigInt(batches);
    this.mirrored.set(k, total);
  }

  /** Partitions per lifecycle state per mirror (every state, zeros included), sorted. */
  partitionCounts(): { mirror: string; state: string; count: number }[] {
    const counts = new Map<string, Map<string, number>>();
    for (const view of this.views()) {
      let perState = counts.get(view.key.mirror);
      if (!perState) {
        perState = new Map(LIFECYCLE_STATES.map((s) => [s, 0]));
        counts.set(view.key.mirror, perState);
      }
      perState.set(view.state, (perState.get(view.state) ?? 0) + 1);
    }
    return [...counts.keys()]
      .sort(compareStrings)
      .flatMap((mirror) => [...counts.get(mirror)!].map(([state, count]) => ({ mirror, state, count })));
  }

  /**
   * Lag (source HW - destination LEO, at least 0) of every partition the fetchers report, and of every
   * PAUSED or FAILED partition whose source HW is known (last seen by a fetcher or a live query), sorted. For
   * such a partition this also starts a live query of the source (answer used from the next call on);
   * {@link refreshPausedLags} awaits those answers.
   */
  lags(): { mirror: string; topic: string; partition: number; lag: bigint }[] {
    return this.views()
      .flatMap((view) => {
        const o = this.offsetsOf(view.key, view.state);
        if (!o) return [];
        const lag = o.sourceHighWatermark - o.destinationLogEndOffset;
        return [{ ...pick(view.key), lag: lag > 0n ? lag : 0n }];
      })
      .sort(
        (a, b) =>
          compareStrings(a.mirror, b.mirror) || compareStrings(a.topic, b.topic) || a.partition - b.partition,
      );
  }

  /**
   * Asks the source for the high watermark of every PAUSED and FAILED partition now and resolves once the
   * answers are in (a source that does not answer leaves a PAUSED partition's last known value, and a FAILED
   * one without lag), so the next {@link lags} is current.
   */
  async refreshPausedLags(): Promise<void> {
    const paused = this.views().filter((v) => LAG_WITHOUT_FETCHER_STATES.has(v.state));
    await Promise.all(paused.map((v) => this.askSource(v.key, v.state)));
  }

  private offsetsOf(
    key: MirrorPartitionKey,
    state: string,
  ): { sourceHighWatermark: bigint; destinationLogEndOffset: bigint } | undefined {
    const id = lagId(key);
    const fetched = this.options.offsets?.(key);
    if (!LAG_WITHOUT_FETCHER_STATES.has(state)) {
      if (fetched) this.lastSourceHw.set(id, fetched.sourceHighWatermark);
      return fetched;
    }
    // No fetcher runs for a paused or failed partition: its lag grows with the source while the
    // destination stands. A failed partition's fetcher view froze when it failed: never taken as the source's.
    if (fetched && state === "PAUSED" && !this.lastSourceHw.has(id)) {
      this.lastSourceHw.set(id, fetched.sourceHighWatermark);
    }
    void this.askSource(key, state);
    const sourceHighWatermark = this.lastSourceHw.get(id);
    const destinationLogEndOffset = this.options.destinationLogEndOffset?.(key);
    if (sourceHighWatermark === undefined || destinationLogEndOffset === undefined) return undefined;
    return { sourceHighWatermark, destinationLogEndOffset };
  }

  /**
   * A FAILED partition's lag is only reported while the source answers, as describe does: its source topic
   * may be gone for good (deleted, or another topic now), and the last value seen would stand forever.
   */
  private askSource(key: MirrorPartitionKey, state: string): Promise<void> {
    const live = this.options.liveSourceHighWatermark;
    if (!live) return Promise.resolve();
    const id = lagId(key);
    const running = this.asking.get(id);
    if (running) return running;
    const ask: Promise<void> = live(key)
      .then(
        (hw) => {
          // Only while still asked for: a mirror deleted meanwhile must not get its offset back.
          if (this.asking.get(id) !== ask) return;
          if (hw !== null) this.lastSourceHw.set(id, hw);
          else if (state === "FAILED") this.lastSourceHw.delete(id);
        },
        () => {},
      )
      .finally(() => {
        if (this.asking.get(id) === ask) this.asking.delete(id);
      });
    this.asking.set(id, ask);
    return ask;
  }

  /** Every metric in the Prometheus text format (names in {@link MIRROR_METRIC_NAMES}). */
  toPrometheusText(): string {
    const views = this.views();
    const topics = new Map<string, Set<string>>();
    for (const v of views) {
      const set = topics.get(v.key.mirror) ?? new Set<string>();
      set.add(v.key.topic);
      topics.set(v.key.mirror, set);
    }
    const mirrored = [...this.mirrored]
      .map(([k, v]) => {
        const [mirror, topic] = k.split("\u0000") as [string, string];
        return { mirror, topic, ...v };
      })
      .sort((a, b) => compareStrings(a.mirror, b.mirror) || compareStrings(a.topic, b.topic));
    const N = MIRROR_METRIC_NAMES;
    const families: PrometheusFamily[] = [
      {
        name: N.partitionCount,
        help: "Mirror partitions per lifecycle state.",
        type: "gauge",
        samples: this.partitionCounts().map((c) => ({
          labels: { mirror: c.mirror, state: c.state },
          value: c.count,
        })),
      },
      {
        name: N.topicCount,
        help: "Topics with mirror partition state, per mirror.",
        type: "gauge",
        samples: [...topics.keys()]
          .sort(compareStrings)
          .map((mirror) => ({ labels: { mirror }, value: topics.get(mirror)!.size })),
      },
      {
        name: N.lag,
        help: "Source high watermark minus destination log end offset.",
        type: "gauge",
        samples: this.lags().map((l) => ({
          labels: { mirror: l.mirror, topic: l.topic, partition: String(l.partition) },
          value: l.lag,
        })),
      },
      {
        name: N.syncErrors,
        help: "Metadata sync errors per mirror and kind.",
        type: "counter",
        samples: this.syncErrors().map((e) => ({
          labels: { mirror: e.mirror, kind: e.kind },
          value: e.count,
        })),
      },
      {
        name: N.fetchErrors,
        help: "Fetches and leader lookups the source did not answer, and mirror partitions that failed, per mirror.",
        type: "counter",
        samples: this.fetchErrorCounts().map((e) => ({ labels: { mirror: e.mirror }, value: e.count })),
      },
      {
        name: N.bytes,
        help: "Bytes of record batches mirrored into the destination.",
        type: "counter",
        samples: mirrored.map((m) => ({ labels: { mirror: m.mirror, topic: m.topic }, value: m.bytes })),
      },
      {
        name: N.batches,
        help: "Record batches mirrored into the destination.",
        type: "counter",
        samples: mirrored.map((m) => ({ labels: { mirror: m.mirror, topic: m.topic }, value: m.batches })),
      },
    ];
    return renderPrometheus(families);
  }
}

function lagId(key: MirrorPartitionKey): string {
  return `${key.mirror}\u0000${key.topicId}\u0000${key.partition}`;
}

function pick(key: MirrorPartitionKey): { mirror: string; topic: string; partition: number } {
  return { mirror: key.mirror, topic: key.topic, partition: key.partition };
}
