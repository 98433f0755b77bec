import { ManualClock } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { SeededScheduler, VirtualLivelockError, VirtualTime } from "../src/index";

function driver(livelockTasks: number) {
  const clock = new ManualClock(1_000);
  const scheduler = new SeededScheduler(clock, { seed: 1 });
  return { clock, scheduler, time: new VirtualTime(clock, scheduler, livelockTasks) };
}

describe("VirtualTime's livelock guard", () => {
  it("reports work that reschedules itself without delay instead of spinning forever", async () => {
    const { scheduler, time } = driver(1_000);
    let spins = 0;
    const spin = () => {
      spins++;
      scheduler.schedule(spin, 0);
    };
    scheduler.schedule(spin, 0);
    const error = await time.run(new Promise<never>(() => undefined)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VirtualLivelockError);
    expect((error as VirtualLivelockError).at).toBe(1_000);
    expect((error as VirtualLivelockError).message).toContain("virtual time is stuck at 1000 ms");
    expect(spins).toBeGreaterThan(1_000);
  });

  it("lets the same number of tasks through when they are spread over time, as a backoff spreads retries", async () => {
    const { clock, scheduler, time } = driver(1_000);
    let spins = 0;
    const spin = () => {
      spins++;
      if (spins < 5_000) scheduler.schedule(spin, 1);
    };
    scheduler.schedule(spin, 0);
    await time.advance(6_000);
    expect(spins).toBe(5_000);
    expect(clock.now()).toBe(7_000);
    expect(time.busiestInstant).toBeLessThan(1_000);
  });
});
