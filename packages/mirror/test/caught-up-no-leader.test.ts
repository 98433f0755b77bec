import { describe, expect, it } from "vitest";
import { MirrorWaitTimeoutError } from "../src/index";
import { advance, ordersLedAwayFromCoordinator, runUntil } from "./embedded-api-helpers";

describe("ClusterMirroring.whenCaughtUp: a destination partition without a leader", () => {
  it("times out saying the partition has no leader and what brings one back, not only an unknown lag", async () => {
    const { env, leader } = await ordersLedAwayFromCoordinator("leader-only");
    const { mirroring, destination } = env;
    // The only replica's broker is gone: nothing can be copied to orders-0 until it is back.
    destination.crashBroker(leader);
    await advance(env, 100);
    expect(destination.controller.image.partition("orders", 0)!.leader).toBe(-1);

    const error = await runUntil(
      env,
      mirroring.whenCaughtUp("m1", { timeoutMs: 1_000 }).catch((e: unknown) => e),
    );
    expect(error).toBeInstanceOf(MirrorWaitTimeoutError);
    expect((error as Error).message).toMatch(
      /: 1 of 1 partitions of mirror m1 not caught up to the source's high watermark at the call \(orders-0 \w+ has no leader on the destination, so nothing is copied to it: start a broker of its in-sync replicas/,
    );

    destination.startBroker(leader);
    await runUntil(env, mirroring.whenCaughtUp("m1"), 30_000);
  });
});
