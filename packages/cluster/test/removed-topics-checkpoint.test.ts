import { describe, expect, it } from "vitest";
import { batch, testCluster } from "./helpers";

describe("the removed-topics checkpoint on a disk that fills up", () => {
  it("a broker that hosted nothing yet opens a new topic's replica on a full disk, as it did before", async () => {
    const { cluster, settle } = testCluster({ brokers: 1, logger: { warn: () => {} } });
    cluster.setDiskFull(0, true);
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
    settle(1000);
    // Opening an empty log stores nothing; the checkpoint was written when the broker started.
    expect(cluster.broker(0)!.replica("t", 0)?.log.logEndOffset).toBe(0n);
    cluster.setDiskFull(0, false);
    const info = await cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["v"]), acks: 1 });
    expect(info.baseOffset).toBe(0n);
  });
});
