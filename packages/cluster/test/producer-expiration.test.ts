import { describe, expect, it } from "vitest";
import {
  ClusterError,
  describeProducers,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  SeededRandom,
} from "../src/index";
import { batch, testCluster } from "./helpers";

describe("producer.id.expiration.ms on the brokers (Kafka's PeriodicProducerExpirationCheck)", () => {
  it("every replica forgets an idle producer at the first check past its expiration", async () => {
    const { cluster, settle } = testCluster({
      brokers: 2,
      producerIdExpirationMs: 60_000,
      producerIdExpirationCheckIntervalMs: 10_000,
    });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1]] });
    settle();
    // Stamped at the cluster clock's start (see `batch`).
    const idempotent = batch(["a"], { producerId: 5n, producerEpoch: 0, baseSequence: 0 });
    const acked = cluster
      .leaderFor("t", 0)
      .produce({ topic: "t", partition: 0, batch: idempotent, acks: -1 });
    settle();
    await acked;
    const known = () =>
      [0, 1].map((b) => cluster.broker(b)!.replica("t", 0)!.log.producerStateSnapshot().length);
    settle(59_000);
    expect(known()).toEqual([1, 1]);
    expect(describeProducers(cluster, "t", 0).map((p) => p.producerId)).toEqual([5n]);
    settle(10_000);
    expect(known()).toEqual([0, 0]);
    cluster.close();
  });

  it("refuses an expiration or check interval below 1 ms with INVALID_REQUEST", () => {
    for (const bad of [{ producerIdExpirationMs: 0 }, { producerIdExpirationCheckIntervalMs: 1.5 }]) {
      const clock = new ManualClock(0);
      const start = () =>
        KafkaCluster.start({
          brokers: 1,
          clock,
          scheduler: new ManualScheduler(clock),
          random: new SeededRandom(1),
          ...bad,
        });
      expect(start).toThrow(ClusterError);
      expect(start).toThrow(/must be an integer >= 1/);
    }
  });
});
