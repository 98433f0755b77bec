import { encodeMirrorPidResetBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

describe("a re-add's check of local writes on a log with a second PID reset after them", () => {
  // Logs an earlier version wrote can hold a second MIRROR_PID_RESET after writes a failover kept (a
  // failover of a re-add stopped before its truncation, soak FC_SEED=4); today's failovers write none
  // there, so only such a log reaches this rule (seeded bug props-17). Counting from the last barrier
  // alone would let a plain re-add truncate those writes without asking.
  it("counts the writes in an epoch above this cluster's LME, not only those after the last barrier", async () => {
    const env = embeddedApiEnv();
    const { source, destination, mirroring } = env;
    source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    await produce(env, source, "orders", 2);
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await runUntil(env, mirroring.whenCaughtUp("m1"));
    await runUntil(env, mirroring.admin.removeTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "STOPPED"));
    const lme = mirroring.coordinators.describe("m1")[0]!.lastMirrorEpoch;
    expect(lme).toBeGreaterThanOrEqual(0);

    // Written here after the failover (offsets 3-5: the mirrored records, then the barrier at 2).
    await produce(env, destination, "orders", 3);
    const leader = destination.controller.image.partition("orders", 0)!.leader;
    destination
      .broker(leader)!
      .appendControlBatch(
        "orders",
        0,
        encodeMirrorPidResetBatch({ sourceClusterId: "source-cluster-id-00001", timestamp: 0n }),
      );
    const log = destination.broker(leader)!.replica("orders", 0)!.log;
    expect(log.endsWithPidReset()).toBe(true);
    expect([...log.batches()].some((b) => !b.isControl && b.partitionLeaderEpoch > lme)).toBe(true);

    await expect(runUntil(env, mirroring.admin.addTopics("m1", "orders"))).rejects.toMatchObject({
      errorName: "UNSAFE_TRUNCATION",
      message: expect.stringContaining("orders-0: 3 record(s) from offset 3"),
    });
    // Refused before anything changed: the topic is still failed over, its writes all there.
    expect(mirroring.coordinators.describe("m1")[0]!.state).toBe("STOPPED");
    expect(log.logEndOffset).toBe(7n);
  });
});
