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
});
