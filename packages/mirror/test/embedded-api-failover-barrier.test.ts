import type { Broker } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { MIRROR_STATE_TOPIC } from "../src/destination/embedded-state-log";
import { embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

describe("the failover's PID reset barrier", () => {
  it("counts once the in-sync replicas have it: a leader lost right after appending it is not STOPPED without one", async () => {
    const env = embeddedApiEnv({ destinationBrokers: 3, numStatePartitions: 1 });
    const { mirroring, destination } = env;
    env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    // The partition's leader is not the coordinator's broker, so losing it leaves the coordinator running.
    const coordinator = destination.controller.image.partition(MIRROR_STATE_TOPIC, 0)!.leader;
    const leader = [0, 1, 2].find((b) => b !== coordinator)!;
    destination.controller.createTopic({
      name: "orders",
      replicaAssignment: [[leader, ...[0, 1, 2].filter((b) => b !== leader)]],
      configs: {},
      topicId: env.source.controller.image.topic("orders")!.topicId,
    });
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await produce(env, env.source, "orders", 2);
    await runUntil(env, mirroring.whenCaughtUp("m1"));

    // The leader dies the moment the barrier is on its log, before any follower fetched it.
    const broker = destination.broker(leader) as Broker;
    const append = broker.appendControlBatch.bind(broker);
    broker.appendControlBatch = (topic, partition, batch) => {
      const info = append(topic, partition, batch);
      if (topic === "orders" && broker.replica(topic, partition)?.log.endsWithPidReset()) {
        destination.crashBroker(leader);
      }
      return info;
    };
    await runUntil(env, mirroring.admin.removeTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "STOPPED"));
    // The new leader (an in-sync replica) must hold the barrier before the partition is writable.
    const now = destination.controller.image.partition("orders", 0)!.leader;
    expect(now).not.toBe(leader);
    expect(destination.broker(now)!.replica("orders", 0)!.log.endsWithPidReset()).toBe(true);
  });
});
