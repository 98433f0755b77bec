import { expect } from "vitest";
import type { KafkaClusterOptions } from "../src/index";
import { batchesOf, sourceBatch, testCluster } from "./helpers";

/**
 * A read-only mirror partition `m-0` on brokers 0, 1, 2 (leader 0) holding `batches` (by default "a", "b",
 * "c" of epoch 0) on every replica; `hex(broker)` lists a replica's batches, `owed()` the cuts its
 * replicas still owe (the owed-truncation tests).
 */
export function mirroredPartition(
  options: Partial<KafkaClusterOptions> = {},
  batches: readonly Buffer[] = [sourceBatch(0n, 0, "a"), sourceBatch(1n, 0, "b"), sourceBatch(2n, 0, "c")],
) {
  const t = testCluster(options);
  t.cluster.controller.createTopic({
    name: "m",
    replicaAssignment: [[0, 1, 2]],
    configs: { "mirror.name": "dr" },
  });
  t.settle();
  t.cluster.broker(0)!.appendAsIs("m", 0, batches);
  t.settle();
  const hex = (id: number) => batchesOf(t.cluster, id, "m").map((b) => b.buffer.toString("hex"));
  expect(hex(1)).toEqual(hex(0));
  expect(hex(2)).toEqual(hex(0));
  const owed = () => t.cluster.controller.image.partition("m", 0)?.pendingTruncations;
  return { ...t, hex, owed };
}
