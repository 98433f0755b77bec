import { ControlRecordType, encodeMirrorPidResetBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

describe("a failover of a log that ends with a barrier mirrored from the source", () => {
  it("writes its own barrier above the LME after the source's", async () => {
    const env = embeddedApiEnv();
    const { source, destination, mirroring } = env;
    source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    await produce(env, source, "orders", 2);
    // The source had failed over itself (it is a mirror's new primary, as in a failback or a chain): its
    // log ends with its own MIRROR_PID_RESET barrier.
    const sourceLeader = source.controller.image.partition("orders", 0)!.leader;
    source
      .broker(sourceLeader)!
      .appendControlBatch(
        "orders",
        0,
        encodeMirrorPidResetBatch({ sourceClusterId: "upstream-cluster-id-0001", timestamp: 0n }),
      );
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await runUntil(env, mirroring.whenCaughtUp("m1"));
    const log = () => destination.leaderFor("orders", 0).replica("orders", 0)!.log;
    expect(log().endsWithPidReset()).toBe(true); // the source's barrier, mirrored as its last batch

    await runUntil(env, mirroring.admin.removeTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "STOPPED"));
    const lme = mirroring.coordinators.describe("m1")[0]!.lastMirrorEpoch;
    const batches = [...log().batches()];
    const resets = batches.filter((b) => b.isControl && b.controlType === ControlRecordType.MIRROR_PID_RESET);
    // The mirrored barrier at the source's epoch (the LME), then this failover's own above it, last.
    expect(resets.map((b) => b.partitionLeaderEpoch > lme)).toEqual([false, true]);
    expect(batches.at(-1)).toBe(resets.at(-1));
    expect(batches.at(-1)!.partitionLeaderEpoch).toBeGreaterThan(lme);
  });
});
