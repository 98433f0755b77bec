import type { Broker } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { ordersLedAwayFromCoordinator, runUntil } from "./embedded-api-helpers";

describe("the failover's PID reset barrier", () => {
  it("counts once the in-sync replicas have it: a leader lost right after appending it is not STOPPED without one", async () => {
    const { env, leader } = await ordersLedAwayFromCoordinator("all");
    const { mirroring, destination } = env;

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
