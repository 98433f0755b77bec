import { describe, expect, it } from "vitest";
import {
  activePassive,
  checkNow,
  failback,
  failover,
  formatViolations,
  produce,
  Simulation,
  settleAndCheck,
  txnBegin,
} from "../src/index";

describe("Simulation", () => {
  it("runs active-passive through produce, an open transaction, failover and failback with no violation", async () => {
    const sim = await Simulation.create(activePassive(), 7);
    await produce(sim, 0, 0, 3);
    await produce(sim, 0, 1, 2);
    await txnBegin(sim, 0, 0);
    await sim.world.time.advance(2_000);
    await checkNow(sim);
    await failover(sim, 0);
    await produce(sim, 1, 0, 2);
    await failback(sim, 0);
    await settleAndCheck(sim);
    expect(formatViolations(sim.violations), sim.steps.join("\n")).toBe("");
    expect(sim.model.failovers.length).toBeGreaterThan(0);
  });
});
