import { describe, expect, it } from "vitest";
import { MirrorMetrics } from "../src/metrics/mirror-metrics";
import { FakeCoordinators } from "./meta-helpers";

const key = (mirror: string, topic: string, partition: number) => ({
  mirror,
  topic,
  topicId: "AAAAAAAAAAAAAAAAAAAAAA",
  partition,
});

describe("MirrorMetrics", () => {
  it("counts partitions per state, lag, sync errors and mirrored bytes, and prints Prometheus text", () => {
    const coordinators = new FakeCoordinators();
    coordinators.put(key("m1", "foo", 0), "MIRRORING");
    coordinators.put(key("m1", "foo", 1), "MIRRORING");
    coordinators.put(key("m1", "bar", 0), "FAILED");
    const metrics = new MirrorMetrics({
      coordinators,
      offsets: (k) =>
        k.topic === "foo"
          ? { sourceHighWatermark: 94n, destinationLogEndOffset: 84n + BigInt(k.partition) }
          : undefined,
    });
    metrics.recordSyncError("m1", "AclSyncError");
    metrics.recordSyncError("m1", "AclSyncError");
    metrics.recordSyncError("m1", "TopicConfigSyncError");
    metrics.recordMirrored(key("m1", "foo", 0), 1000, 2);
    metrics.recordMirrored(key("m1", "foo", 1), 24, 1);
    metrics.recordFetchError("m1");
    metrics.recordFetchError("m1");
    expect(metrics.lags()).toEqual([
      { mirror: "m1", topic: "foo", partition: 0, lag: 10n },
      { mirror: "m1", topic: "foo", partition: 1, lag: 9n },
    ]);
    expect(metrics.toPrometheusText()).toBe(
      [
        "# HELP kafka_server_cluster_mirror_partition_count Mirror partitions per lifecycle state.",
        "# TYPE kafka_server_cluster_mirror_partition_count gauge",
        'kafka_server_cluster_mirror_partition_count{mirror="m1",state="UNKNOWN"} 0',
        'kafka_server_cluster_mirror_partition_count{mirror="m1",state="PREPARING"} 0',
        'kafka_server_cluster_mirror_partition_count{mirror="m1",state="MIRRORING"} 2',
        'kafka_server_cluster_mirror_partition_count{mirror="m1",state="EPOCH_FENCING"} 0',
        'kafka_server_cluster_mirror_partition_count{mirror="m1",state="PAUSING"} 0',
        'kafka_server_cluster_mirror_partition_count{mirror="m1",state="PAUSED"} 0',
        'kafka_server_cluster_mirror_partition_count{mirror="m1",state="STOPPING"} 0',
        'kafka_server_cluster_mirror_partition_count{mirror="m1",state="STOPPED"} 0',
        'kafka_server_cluster_mirror_partition_count{mirror="m1",state="FAILED"} 1',
        "# HELP kafka_server_cluster_mirror_topic_count Topics with mirror partition state, per mirror.",
        "# TYPE kafka_server_cluster_mirror_topic_count gauge",
        'kafka_server_cluster_mirror_topic_count{mirror="m1"} 2',
        "# HELP kafka_server_cluster_mirror_lag Source high watermark minus destination log end offset.",
        "# TYPE kafka_server_cluster_mirror_lag gauge",
        'kafka_server_cluster_mirror_lag{mirror="m1",topic="foo",partition="0"} 10',
        'kafka_server_cluster_mirror_lag{mirror="m1",topic="foo",partition="1"} 9',
        "# HELP kafka_server_cluster_mirror_sync_errors_total Metadata sync errors per mirror and kind.",
        "# TYPE kafka_server_cluster_mirror_sync_errors_total counter",
        'kafka_server_cluster_mirror_sync_errors_total{mirror="m1",kind="AclSyncError"} 2',
        'kafka_server_cluster_mirror_sync_errors_total{mirror="m1",kind="TopicConfigSyncError"} 1',
        "# HELP kafka_server_cluster_mirror_fetch_errors_total Fetches and leader lookups the source did not answer, and mirror partitions that failed, per mirror.",
        "# TYPE kafka_server_cluster_mirror_fetch_errors_total counter",
        'kafka_server_cluster_mirror_fetch_errors_total{mirror="m1"} 2',
        "# HELP kafka_server_cluster_mirror_bytes_total Bytes of record batches mirrored into the destination.",
        "# TYPE kafka_server_cluster_mirror_bytes_total counter",
        'kafka_server_cluster_mirror_bytes_total{mirror="m1",topic="foo"} 1024',
        "# HELP kafka_server_cluster_mirror_batches_total Record batches mirrored into the destination.",
        "# TYPE kafka_server_cluster_mirror_batches_total counter",
        'kafka_server_cluster_mirror_batches_total{mirror="m1",topic="foo"} 3',
        "",
      ].join("\n"),
    );
  });

  it("drops a live answer that arrives after its mirror was forgotten (deleted): no lag comes back", async () => {
    const coordinators = new FakeCoordinators();
    coordinators.put(key("m1", "foo", 0), "PAUSED");
    const answers: ((hw: bigint) => void)[] = [];
    const metrics = new MirrorMetrics({
      coordinators,
      destinationLogEndOffset: () => 4n,
      liveSourceHighWatermark: () => new Promise<bigint | null>((resolve) => answers.push(resolve)),
    });
    expect(metrics.lags()).toEqual([]); // asks the source; no answer yet
    expect(answers).toHaveLength(1);
    metrics.forgetMirror("m1");
    answers[0]!(10n);
    await new Promise((r) => setTimeout(r, 0));
    // The mirror is created again under the name, paused, and its source not yet answering.
    expect(metrics.lags()).toEqual([]);
    expect(answers).toHaveLength(2); // a new query, not the forgotten one
    answers[1]!(7n);
    await new Promise((r) => setTimeout(r, 0));
    expect(metrics.lags()).toEqual([{ mirror: "m1", topic: "foo", partition: 0, lag: 3n }]);
  });

  it("escapes label values and prints empty families with headers only", () => {
    const coordinators = new FakeCoordinators();
    const metrics = new MirrorMetrics({ coordinators });
    metrics.recordSyncError('we"ird\\m', "AclSyncError");
    expect(metrics.toPrometheusText()).toContain(
      'kafka_server_cluster_mirror_sync_errors_total{mirror="we\\"ird\\\\m",kind="AclSyncError"} 1',
    );
    expect(metrics.partitionCounts()).toEqual([]);
  });
});
