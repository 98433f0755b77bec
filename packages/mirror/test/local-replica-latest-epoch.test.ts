import { KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import { encodeRecordBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { EmbeddedLocalReplica } from "../src/destination/embedded-local-replica";

function cluster(): KafkaCluster {
  const clock = new ManualClock(1_700_000_000_000);
  return KafkaCluster.start({
    brokers: 1,
    clock,
    scheduler: new ManualScheduler(clock),
    random: new SeededRandom(1),
    clusterId: "destination-cluster-id1",
  });
}

const batch = () =>
  encodeRecordBatch({
    baseTimestamp: 1_700_000_000_000n,
    records: [
      { attributes: 0, offsetDelta: 0, timestampDelta: 0n, key: null, value: Buffer.from("v"), headers: [] },
    ],
  });

describe("the destination replica's latest (mirrored) epoch", () => {
  it("is the last batch's epoch, not an epoch a leader recorded at the log end and never wrote in", async () => {
    const c = cluster();
    c.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    await c.leaderFor("orders", 0).produce({ topic: "orders", partition: 0, batch: batch(), acks: 1 });
    const before = c.controller.image.partition("orders", 0)!.leaderEpoch;
    // A new leader epoch while the topic is writable: the leader records it at its log end (Kafka's
    // maybeAssignEpochStartOffset), with no batch in it.
    c.controller.bumpLeaderEpochs([{ topic: "orders", partition: 0, minLeaderEpoch: before + 1 }]);
    const log = c.leaderFor("orders", 0).replica("orders", 0)!.log;
    expect(log.latestEpoch).toBe(before + 1);
    const replica = new EmbeddedLocalReplica(c, 0, "orders", 0);
    expect(replica.latestEpoch()).toBe(before);
  });

  it("of a log with no batch is the cache's latest, or -1", async () => {
    const c = cluster();
    c.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    const replica = new EmbeddedLocalReplica(c, 0, "orders", 0);
    const log = c.leaderFor("orders", 0).replica("orders", 0)!.log;
    expect(replica.latestEpoch()).toBe(log.latestEpoch ?? -1);
    log.truncateFullyAndStartAt(5n);
    expect(replica.latestEpoch()).toBe(-1);
  });
});
