import { encodeMirrorPidResetBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import {
  activePassive,
  checkNoBarrierOverLocalWrites,
  checkNow,
  failStopped,
  leaderLog,
  Simulation,
} from "../src/index";

describe("a failed-over partition's local writes above its barrier", () => {
  it("fail again once written to, come back to STOPPED with the local transaction committed", async () => {
    const sim = await Simulation.create(activePassive(), 0);
    // Fails orders over first (none is STOPPED yet), then writes, opens a transaction and fails orders-0.
    await failStopped(sim, 0, 3);
    expect(sim.steps.join("\n")).toContain(
      "orders-0 (STOPPED, writable) with a late fetch error: STOPPED and writable again",
    );
    expect(sim.stats.stoppedFailedAgain).toBe(1);
    expect(sim.stats.stoppedFailedAgainInTxn).toBe(1);
    expect(sim.model.commits.filter((c) => c.node === "b" && c.topic === "orders")).toHaveLength(1);
    await checkNow(sim);
    expect(sim.violations).toEqual([]);
  });

  it("a MIRROR_PID_RESET after them is reported, unless a mirror appended to the partition again first", async () => {
    const sim = await Simulation.create(activePassive(), 1);
    await failStopped(sim, 0, 1);
    const cluster = sim.node("b").cluster;
    const f = sim.model.failovers.find((x) => x.topic === "orders" && x.partition === 0)!;
    expect(checkNoBarrierOverLocalWrites("b", cluster, sim.model.failovers)).toEqual([]);
    const leader = cluster.controller.image.partition("orders", 0)!.leader;
    const reset = encodeMirrorPidResetBatch({ sourceClusterId: "a", timestamp: 0n });
    const at = cluster.broker(leader)!.appendControlBatch("orders", 0, reset).lastOffset;
    expect(checkNoBarrierOverLocalWrites("b", cluster, sim.model.failovers)).toEqual([
      {
        invariant: "no-barrier-over-local-writes",
        message: expect.stringContaining(
          `b orders-0: a MIRROR_PID_RESET at ${at} follows the local producers' data at ${f.barrierOffset + 1n}`,
        ),
      },
    ]);
    // The node joined a mirror again below it: from there on its log is that source's copy.
    f.mirroredAgainFrom = leaderLog(cluster, "orders", 0)!.logEndOffset - 1n;
    expect(checkNoBarrierOverLocalWrites("b", cluster, sim.model.failovers)).toEqual([]);
  });
});
