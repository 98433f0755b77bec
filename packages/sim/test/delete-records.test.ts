import type { KafkaCluster } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import {
  activePassive,
  deleteRecords,
  failover,
  formatViolations,
  produce,
  Simulation,
  settleAndCheck,
} from "../src/index";
import { leaderLog } from "../src/invariants/logs";

/** The active-passive simulation with four batches on a's `orders-0`, mirrored to b. */
async function mirroredBatches(): Promise<Simulation> {
  const sim = await Simulation.create(activePassive(), 11);
  for (let i = 0; i < 4; i++) await produce(sim, 0, 0, 2);
  await sim.world.time.advance(2_000);
  return sim;
}

function logStart(cluster: KafkaCluster): bigint | undefined {
  return leaderLog(cluster, "orders", 0)?.logStartOffset;
}

function leaderOf(cluster: KafkaCluster) {
  return cluster.broker(cluster.controller.image.partition("orders", 0)!.leader)!;
}

describe("DeleteRecords on a primary (simulation command and log-start-follow guard)", () => {
  it("moves the copy's log start to the source's, and the checks find nothing wrong", async () => {
    const sim = await mirroredBatches();
    await deleteRecords(sim, 0, 0, 1);
    const purged = logStart(sim.node("a").cluster)!;
    expect(purged, sim.steps.join("\n")).toBeGreaterThan(0n);
    await sim.world.time.advance(2_000);
    expect(logStart(sim.node("b").cluster)).toBe(purged);
    expect(sim.stats.logStartFollows).toBeGreaterThan(0);
    await settleAndCheck(sim);
    expect(formatViolations(sim.violations), sim.steps.join("\n")).toBe("");
  });

  it("reports a copy whose log start moves past its source's (records the source still holds)", async () => {
    const sim = await mirroredBatches();
    const source = logStart(sim.node("a").cluster)!;
    const b = sim.node("b").cluster;
    leaderOf(b).followSourceLogStart("orders", 0, source + 3n);
    expect(logStart(b)).toBe(source + 3n);
    expect(sim.violations.map((v) => v.message).join("\n")).toMatch(
      /log start 0 -> 3 .* past the source a's log start 0/,
    );
  });

  it("reports a failed-over log that follows its old source's purge", async () => {
    const sim = await mirroredBatches();
    await failover(sim, 0);
    await deleteRecords(sim, 0, 0, 1);
    const b = sim.node("b").cluster;
    const before = sim.violations.length;
    // What a fetcher answer that arrived after the failover would do if the engine still followed it.
    leaderOf(b).followSourceLogStart("orders", 0, logStart(sim.node("a").cluster)!);
    expect(
      sim.violations
        .slice(before)
        .map((v) => v.message)
        .join("\n"),
    ).toMatch(/but the partition is writable/);
  });

  describe("after the source's log started over lower (a failback onto a copy without its epochs)", () => {
    /** a purges orders-0 below 4 (b has not followed yet), then its log starts over, empty, at 0. */
    async function restartedSource() {
      const sim = await mirroredBatches();
      const a = sim.node("a").cluster;
      const b = sim.node("b").cluster;
      // b's copy of a's batches, as a log restored from another copy of them would hold them.
      const held = [...leaderLog(b, "orders", 0)!.batches()].map((batch) => Buffer.from(batch.buffer));
      expect(leaderOf(a).deleteRecords("orders", 0, 4n)).toBe(4n);
      leaderOf(a).truncateFullyAndStartAt("orders", 0, 0n);
      return { sim, a, b, held };
    }

    function followViolations(sim: Simulation): string {
      return sim.violations
        .filter((v) => v.invariant === "log-start-follow")
        .map((v) => v.message)
        .join("\n");
    }

    it("lets a copy follow the earlier log's start: what it drops, the source no longer holds", async () => {
      // A fetch answered just before the restart (log start 4) that arrives just after it.
      const { sim, b } = await restartedSource();
      expect(logStart(b)).toBe(0n);
      leaderOf(b).followSourceLogStart("orders", 0, 4n);
      expect(logStart(b)).toBe(4n);
      expect(followViolations(sim)).toBe("");
      expect(sim.logStarts.earlierLogFollows).toBe(1);
    });

    it("reports a copy that drops a batch the restarted source holds again, byte for byte", async () => {
      const { sim, a, b, held } = await restartedSource();
      leaderOf(a).appendAsIs("orders", 0, held);
      expect(logStart(a)).toBe(0n);
      leaderOf(b).followSourceLogStart("orders", 0, 4n);
      expect(followViolations(sim)).toMatch(/log start 0 -> 4 .* past the source a's log start 0/);
      expect(sim.logStarts.earlierLogFollows).toBe(0);
    });

    it("reports a copy that goes past every log start the source had", async () => {
      const { sim, b } = await restartedSource();
      leaderOf(b).followSourceLogStart("orders", 0, 6n);
      expect(followViolations(sim)).toMatch(/log start 0 -> 6 .* past the source a's log start 0/);
    });
  });
});
