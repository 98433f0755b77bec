import { describe, expect, it } from "vitest";
import { advance, ordersLedAwayFromCoordinator, produce, runUntil } from "./embedded-api-helpers";

describe("group offsets at a failover after an unclean election on the destination", () => {
  it("a failover never leaves a synced offset past the log end it makes writable", async () => {
    const { env, leader } = await ordersLedAwayFromCoordinator("all");
    const { source, destination, mirroring } = env;
    const replicas = destination.controller.image.partition("orders", 0)!.replicas;
    const [f1, f2] = replicas.filter((r) => r !== leader) as [number, number];
    destination.controller.incrementalAlterConfigs({ type: "topic", name: "orders" }, [
      { name: "unclean.leader.election.enable", op: "SET", value: "true" },
    ]);
    // f2 is cut off and leaves the ISR while the mirror copies 10 more records to the leader and f1.
    destination.setReachable(f2, false);
    await produce(env, source, "orders", 10);
    await runUntil(env, mirroring.whenCaughtUp("m1"));
    await advance(env, 60_000);
    expect(destination.controller.image.partition("orders", 0)!.isr).not.toContain(f2);
    const log = () => destination.leaderFor("orders", 0).replica("orders", 0)!.log;
    expect(log().highWatermark).toBe(12n);
    // The source's consumers read all 12: synced (the destination's high watermark covers them).
    source.groups.commitOffsets({
      groupId: "app",
      offsets: [{ topic: "orders", partition: 0, offset: 12n }],
    });
    await runUntil(env, mirroring.refreshNow("m1"));
    expect(destination.groups.fetchOffsets("app").get("orders:0")?.offset).toBe(12n);

    // The source is lost (why one fails over), and so are the destination's leader and f1: f2 is elected
    // uncleanly with the 2 records it has. The operator fails over.
    source.crashBroker(0);
    destination.crashBroker(leader);
    destination.crashBroker(f1);
    destination.setReachable(f2, true);
    await advance(env, 1_000);
    expect(destination.controller.image.partition("orders", 0)!.leader).toBe(f2);
    expect(log().logEndOffset).toBe(2n);
    await runUntil(env, mirroring.admin.removeTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "STOPPED"));
    // Writable now, at its log end: the group resumes there, not at 12, past the records producers write
    // at offsets 3..11 (after the failover's barrier) that it never read.
    const end = log().logEndOffset;
    expect(destination.groups.fetchOffsets("app").get("orders:0")!.offset).toBeLessThanOrEqual(end);
  });
});
