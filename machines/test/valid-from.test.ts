import { describe, expect, it } from "vitest";
import {
  canTransition,
  LIFECYCLE_STATES,
  type LifecycleState,
  lifecycleTransitions,
  mirrorPartitionMachine,
  validFrom,
} from "../src/index";

// Spec §4's table, typed here and only here; the source derives its table from the machine definition.
const SPEC_VALID_FROM: Record<LifecycleState, (LifecycleState | null)[]> = {
  UNKNOWN: [],
  PREPARING: [null, "UNKNOWN", "STOPPED", "FAILED"],
  // FAILED: spec §4's "FAILED retries go back to PREPARING (or the previous state where that is safe)": a
  // retry of a log that is still a copy of the source resumes MIRRORING or PAUSED, without truncating.
  MIRRORING: ["PREPARING", "PAUSED", "EPOCH_FENCING", "FAILED"],
  EPOCH_FENCING: ["MIRRORING"],
  PAUSING: ["MIRRORING"],
  PAUSED: ["PAUSING", "FAILED"],
  STOPPING: ["PREPARING", "MIRRORING", "EPOCH_FENCING", "PAUSING", "PAUSED", "FAILED"],
  STOPPED: ["STOPPING"],
  // "any": every state, FAILED itself included (a new cause while FAILED, e.g. turning non-retryable).
  FAILED: [null, ...LIFECYCLE_STATES],
};

describe("validFrom", () => {
  it("equals spec §4's table", () => {
    for (const to of LIFECYCLE_STATES) {
      expect(new Set(validFrom[to]), to).toEqual(new Set(SPEC_VALID_FROM[to]));
    }
  });

  it("canTransition agrees with the table for every pair", () => {
    for (const to of LIFECYCLE_STATES) {
      for (const from of [null, ...LIFECYCLE_STATES]) {
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(SPEC_VALID_FROM[to].includes(from));
      }
    }
  });

  it("every lifecycle change in the chart goes through a commit step", () => {
    const edges = lifecycleTransitions();
    expect(edges.length).toBeGreaterThan(20);
    for (const e of edges) {
      expect(e.event, `${e.source} -> ${e.target}`).toBe("COMMITTED");
      expect(e.source).toMatch(new RegExp(`\\.committing_${e.to}\\.appending$`));
    }
  });

  it("every lifecycle state is a top-level state of the machine", () => {
    const keys = Object.keys(mirrorPartitionMachine.root.states);
    for (const s of LIFECYCLE_STATES) expect(keys).toContain(s);
  });
});
