import { afterEach, describe, expect, it, vi } from "vitest";
import { CoordinatorShard } from "../src/coordinator/coordinator-shard";
import { embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the fetchers' leadership listener", () => {
  it("looks nothing up on a leader epoch bump; a new leader of a mirroring partition still starts fetching", async () => {
    const env = embeddedApiEnv({ destinationBrokers: 2 });
    env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0], [0]], configs: {} });
    await runUntil(env, env.mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, env.mirroring.admin.addTopics("m1", "orders", { replicationFactor: 2 }));
    await runUntil(env, env.mirroring.whenState("m1", "MIRRORING"));
    const views = vi.spyOn(CoordinatorShard.prototype, "view");

    // A failover bumps every partition's epoch on the leader it keeps: the listener reads no state for it.
    env.destination.controller.bumpLeaderEpochs([
      { topic: "orders", partition: 0, minLeaderEpoch: 20 },
      { topic: "orders", partition: 1, minLeaderEpoch: 20 },
    ]);
    await runUntil(env, Promise.resolve());
    expect(views).not.toHaveBeenCalled();

    // Leadership moves for real: the new leader reads the state and starts the fetchers.
    const leader = env.destination.controller.image.partition("orders", 0)!.leader;
    env.destination.stopBroker(leader);
    await runUntil(env, Promise.resolve());
    expect(views).toHaveBeenCalled();
    await produce(env, env.source, "orders", 3, 0);
    await runUntil(env, env.mirroring.whenCaughtUp("m1"));
    const newLeader = env.destination.controller.image.partition("orders", 0)!.leader;
    expect(newLeader).not.toBe(leader);
    expect(env.destination.broker(newLeader)!.replica("orders", 0)!.log.logEndOffset).toBe(3n);
  });
});
