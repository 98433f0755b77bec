import { describe, expect, it } from "vitest";
import type { Controller } from "../src/index";
import { controller, errorOf } from "./controller-helpers";

const UNCLEAN = "unclean.leader.election.enable";

/** Topic `name` on brokers 0, 1, 2 with broker 2 out of the ISR (it fell behind). */
function withOutOfSyncReplica(c: Controller, name: string, configs: Record<string, string> = {}): void {
  c.createTopic({ name, replicaAssignment: [[0, 1, 2]], configs });
  c.alterPartition(name, 0, { leader: 0, leaderEpoch: 0, isr: [0, 1] });
}

function setClusterDefault(c: Controller, value: string): void {
  c.incrementalAlterConfigs({ type: "broker", name: "" }, [{ name: UNCLEAN, op: "SET", value }]);
}

describe("Controller unclean leader election", () => {
  it("follows the cluster-wide broker default of unclean.leader.election.enable when the topic has none", () => {
    const c = controller();
    withOutOfSyncReplica(c, "inherits");
    withOutOfSyncReplica(c, "refuses", { [UNCLEAN]: "false" });
    setClusterDefault(c, "true");
    // Both in-sync replicas are fenced while the out-of-sync broker 2 runs: Kafka's controller reads the
    // topic's config with the broker default (ConfigurationControlManager.getTopicConfig) and elects it.
    c.fenceBroker(1);
    c.fenceBroker(0);
    expect(c.image.partition("inherits", 0)).toMatchObject({ leader: 2, isr: [2] });
    // The topic's own value wins over the default.
    expect(c.image.partition("refuses", 0)?.leader).toBe(-1);
  });

  it("elects a broker coming back uncleanly under the cluster-wide default", () => {
    const c = controller();
    withOutOfSyncReplica(c, "t");
    setClusterDefault(c, "TRUE");
    c.fenceBroker(2);
    c.fenceBroker(1);
    c.fenceBroker(0);
    expect(c.image.partition("t", 0)?.leader).toBe(-1);
    c.unfenceBroker(2);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 2, isr: [2] });
  });

  it("elects a running out-of-sync replica once unclean elections are turned on for a leaderless partition", () => {
    for (const resource of [
      { type: "topic", name: "t" },
      { type: "broker", name: "" },
    ] as const) {
      const c = controller();
      withOutOfSyncReplica(c, "t");
      withOutOfSyncReplica(c, "other", { [UNCLEAN]: "false" });
      c.fenceBroker(1);
      c.fenceBroker(0);
      expect(c.image.partition("t", 0)?.leader).toBe(-1);
      const epoch = c.image.partition("t", 0)!.leaderEpoch;
      const op = { name: UNCLEAN, op: "SET", value: "true" } as const;
      c.incrementalAlterConfigs(resource, [op], { validateOnly: true });
      expect(c.image.partition("t", 0)?.leader).toBe(-1);
      // Kafka's controller elects uncleanly for leaderless partitions whose topic allows it
      // (maybeTriggerUncleanLeaderElectionForLeaderlessPartitions), without waiting for a broker to return.
      c.incrementalAlterConfigs(resource, [op]);
      expect(c.image.partition("t", 0)).toMatchObject({
        leader: 2,
        isr: [2],
        leaderEpoch: epoch + 1,
      });
      expect(c.image.partition("other", 0)?.leader).toBe(-1);
    }
  });

  it("refuses a cluster-wide unclean.leader.election.enable that is not a boolean", () => {
    const c = controller();
    const err = errorOf(() => setClusterDefault(c, "yes"));
    expect(err.errorName).toBe("INVALID_CONFIG");
    expect(err.message).toContain("must be true or false");
    expect(c.image.brokerConfig(0, UNCLEAN)).toBeUndefined();
  });
});
