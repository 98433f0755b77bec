import { ManualClock } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { RepeatedWarnings } from "../src/node/repeated-warnings";

function setup(windowMs = 60_000) {
  const clock = new ManualClock(1_000);
  const logged: [string, number][] = [];
  const warnings = new RepeatedWarnings(clock, (m, n) => logged.push([m, n]), windowMs);
  return { clock, logged, warnings };
}

describe("RepeatedWarnings", () => {
  it("logs the first warning at once and holds back identical ones within the window", () => {
    const { clock, logged, warnings } = setup();
    warnings.warn("source down");
    for (let i = 0; i < 59; i++) {
      clock.advance(1_000);
      warnings.warn("source down");
    }
    expect(logged).toEqual([["source down", 0]]);
  });

  it("logs the first repeat after the window with how many were held back, then starts a new window", () => {
    const { clock, logged, warnings } = setup();
    warnings.warn("source down");
    for (let i = 0; i < 60; i++) {
      clock.advance(1_000);
      warnings.warn("source down");
    }
    expect(logged).toEqual([
      ["source down", 0],
      ["source down", 59],
    ]);
    clock.advance(500);
    warnings.warn("source down");
    expect(logged).toHaveLength(2);
  });

  it("never holds back a different message", () => {
    const { clock, logged, warnings } = setup();
    warnings.warn("a");
    warnings.warn("b");
    clock.advance(1);
    warnings.warn("a");
    warnings.warn("c");
    expect(logged.map(([m]) => m)).toEqual(["a", "b", "c"]);
  });

  it("forgets the oldest of very many distinct messages, so memory stays bounded", () => {
    const { logged, warnings } = setup();
    for (let i = 0; i <= 1_000; i++) warnings.warn(`m${i}`);
    warnings.warn("m0"); // forgotten: logged again
    warnings.warn("m1000"); // remembered: held back
    expect(logged).toHaveLength(1_002);
    expect(logged.at(-1)).toEqual(["m0", 0]);
  });
});
