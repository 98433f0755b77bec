import { describe, expect, it } from "vitest";
import { MIRROR_STATE_TOPIC } from "../src/destination/embedded-state-log";
import { advance, embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

describe("a destination leader elected while its broker starts", () => {
  it("fetches for its mirroring partitions coordinated elsewhere (soak FC_SEED=5)", async () => {
    // A broker that comes back as the last in-sync replica of an offline partition is elected during its
    // own start, before the engine attached to it: the engine must still start that partition's fetcher,
    // whose coordinator (on another broker) saw nothing change.
    const env = embeddedApiEnv({ destinationBrokers: 3, numStatePartitions: 1 });
    const { mirroring, destination } = env;
    env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    const coordinator = destination.controller.image.partition(MIRROR_STATE_TOPIC, 0)!.leader;
    const other = [0, 1, 2].find((b) => b !== coordinator)!;
    // The mirror topic lives on one replica, not the coordinator's broker.
    destination.controller.createTopic({
      name: "orders",
      replicaAssignment: [[other]],
      configs: {},
      topicId: env.source.controller.image.topic("orders")!.topicId,
    });
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await produce(env, env.source, "orders", 2);
    await runUntil(env, mirroring.whenCaughtUp("m1"));

    destination.crashBroker(other);
    await advance(env, 100);
    expect(destination.controller.image.partition("orders", 0)!.leader).toBe(-1);
    destination.startBroker(other);
    expect(destination.controller.image.partition("orders", 0)!.leader).toBe(other);
    await produce(env, env.source, "orders", 3);
    await runUntil(env, mirroring.whenCaughtUp("m1"), 30_000);
    expect(destination.broker(other)!.replica("orders", 0)!.log.logEndOffset).toBe(5n);
  });
});
