import { describe, expect, it } from "vitest";
import { advance, ordersLedAwayFromCoordinator, produce, runUntil } from "./embedded-api-helpers";

describe("a destination leader elected while its broker starts", () => {
  it("fetches for its mirroring partitions coordinated elsewhere (soak FC_SEED=5)", async () => {
    // A broker that comes back as the last in-sync replica of an offline partition is elected during its
    // own start, before the engine attached to it: the engine must still start that partition's fetcher,
    // whose coordinator (on another broker) saw nothing change.
    const { env, leader: other } = await ordersLedAwayFromCoordinator("leader-only");
    const { mirroring, destination } = env;

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
