import { describe, expect, it } from "vitest";
import type { ClusterLogger } from "../src/index";
import { sourceBatch } from "./helpers";
import { mirroredPartition } from "./mirrored-partition";

/** `mirroredPartition` whose cluster's warnings are kept. */
function mirroredPartitionWarning() {
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const logger: ClusterLogger = { warn: (fields, message) => warnings.push({ fields, message }) };
  return { ...mirroredPartition({ logger }), warnings };
}

describe("a truncation owed by a replica whose disk is full (KIP-1279 ReplicaTruncation)", () => {
  it("a follower keeps owing it until its cut succeeds: it never reports a cut it did not make", () => {
    const { cluster, settle, hex, owed } = mirroredPartitionWarning();
    cluster.setDiskFull(2, true);
    const leader = cluster.broker(0)!;
    // The mirror restarts the leader's log at 1 and stores the source's batches there, of the same epoch 0.
    leader.truncateFullyAndStartAt("m", 0, 1n);
    leader.appendAsIs("m", 0, [sourceBatch(1n, 0, "B"), sourceBatch(2n, 0, "C")]);
    settle(1000);
    // Broker 2 cannot write its log start: the cut stays owed.
    expect(owed()?.get(2)).toMatchObject({ offset: 1n, full: true });
    cluster.setDiskFull(2, false);
    settle(1000);
    // KIP-320 sees epoch 0 ending at 3 on both: had the cut been reported undone, "b" and "c" stayed.
    expect(hex(2)).toEqual(hex(0));
    expect(owed()).toBeUndefined();
  });

  it("a replica elected while it cannot cut leads only once it has cut (the record is not half applied)", () => {
    const { cluster, settle, hex, owed, warnings } = mirroredPartitionWarning();
    cluster.crashBroker(1);
    settle();
    cluster.setDiskFull(2, true);
    cluster.broker(0)!.truncateFullyAndStartAt("m", 0, 1n);
    settle();
    expect(owed()?.get(2)).toMatchObject({ offset: 1n, full: true });
    // The leader dies before broker 2 could cut: broker 2, the only in-sync replica left, is elected.
    cluster.crashBroker(0);
    settle();
    expect(cluster.controller.image.partition("m", 0)!.leader).toBe(2);
    expect(warnings.filter((w) => w.fields.event === "metadata.apply_failed")).toEqual([]);
    // While the cut fails it does not lead with the batches the mirror cut ("b", "c").
    expect(() => cluster.broker(2)!.listOffsets("m", 0, -1n)).toThrow(/is not the leader/);
    expect(owed()?.get(2)).toMatchObject({ offset: 1n, full: true });
    cluster.setDiskFull(2, false);
    settle(1000);
    const replica = cluster.broker(2)!.replica("m", 0)!;
    expect(replica.isLeader).toBe(true);
    expect(replica.log.logStartOffset).toBe(1n);
    expect(hex(2)).toEqual([]);
    expect(cluster.broker(2)!.listOffsets("m", 0, -1n).offset).toBe(1n);
    expect([...(owed()?.keys() ?? [])]).toEqual([1]); // broker 1 is down: it owes the cut still
  });
});
