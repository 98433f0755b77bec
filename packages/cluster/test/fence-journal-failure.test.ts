import { describe, expect, it } from "vitest";
import { testCluster } from "./helpers";

describe("a broker that stops while the metadata log cannot be written (a full disk)", () => {
  it("stops all the same: the cluster counts it stopped, says why it stays unfenced, and closes", () => {
    const warnings: Record<string, unknown>[] = [];
    const { cluster, settle } = testCluster({ logger: { warn: (f) => warnings.push(f) } });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[1, 0, 2]] });
    settle();
    cluster.controller.setJournal(() => {
      throw new Error("ENOSPC: no space left on device, write");
    });
    cluster.stopBroker(1);
    expect(cluster.runningBrokers()).toEqual([0, 2]);
    expect(warnings.map((w) => [w.event, w.brokerId])).toEqual([["broker.fence_failed", 1]]);
    cluster.crashBroker(2);
    expect(cluster.runningBrokers()).toEqual([0]);
    // Nothing was recorded: the image still has broker 1 leading (as Kafka's, until its session expires).
    expect(cluster.controller.image.partition("t", 0)?.leader).toBe(1);
    cluster.close();
    expect(cluster.isClosed).toBe(true);
    expect(cluster.runningBrokers()).toEqual([]);
  });

  it("starts again as the leader it still is in the image once the metadata log takes records again", () => {
    const { cluster, settle } = testCluster({ logger: { warn: () => {} } });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[1, 0, 2]] });
    settle();
    cluster.controller.setJournal(() => {
      throw new Error("ENOSPC: no space left on device, write");
    });
    cluster.stopBroker(1);
    cluster.controller.setJournal(undefined);
    cluster.startBroker(1);
    settle(1000);
    const meta = cluster.controller.image.partition("t", 0)!;
    expect(meta.leader).toBe(1);
    expect([...meta.isr].sort()).toEqual([0, 1, 2]);
  });

  it("a broker started while it cannot register fails to start, and registers on its next start", () => {
    const { cluster, settle } = testCluster({ logger: { warn: () => {} } });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[1, 0, 2]] });
    settle();
    cluster.stopBroker(1);
    cluster.controller.setJournal(() => {
      throw new Error("ENOSPC: no space left on device, write");
    });
    expect(() => cluster.startBroker(1)).toThrow(/ENOSPC/);
    expect(cluster.runningBrokers()).toEqual([0, 2]);
    cluster.controller.setJournal(undefined);
    cluster.startBroker(1);
    settle(1000);
    // Registered and unfenced: it rejoins the ISR (a half-started broker counted running stayed fenced).
    expect(cluster.controller.image.brokers.get(1)?.fenced).toBe(false);
    expect([...cluster.controller.image.partition("t", 0)!.isr].sort()).toEqual([0, 1, 2]);
  });
});
