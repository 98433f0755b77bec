import { describe, expect, it } from "vitest";
import {
  canTransition,
  guardName,
  LIFECYCLE_STATES,
  type LifecycleState,
  lifecycleTransitions,
  machineGraphs,
  mirrorPartitionMachine,
  validFrom,
} from "../src/index";
import { commitsToOf } from "../src/valid-from";

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

  it("every lifecycle change in the chart goes through the commit step", () => {
    const edges = lifecycleTransitions();
    expect(edges.length).toBeGreaterThan(20);
    for (const e of edges) expect(e.target, `${e.source} ${e.event}`).toBe("mirrorPartition.committing");
    // Outside the commit step, no transition crosses into another lifecycle state: it asks for a commit.
    const graph = machineGraphs().mirrorPartition;
    const top = (id: string) => id.split(".")[1];
    for (const t of graph.transitions) {
      const from = top(t.source);
      if (from === undefined || from === "recovering" || from === "committing") continue;
      for (const target of t.targets) {
        if (top(target) === from) continue;
        expect(target, `${t.source} ${t.event}`).toBe("mirrorPartition.committing");
        expect(t.actions, `${t.source} ${t.event}`).toContain("prepareCommit");
      }
    }
  });

  it("COMMITTED enters exactly the state the pending change names", () => {
    const appending = mirrorPartitionMachine.root.states.committing?.states.appending;
    const committed = [...(appending?.transitions.get("COMMITTED") ?? [])];
    expect(committed.length).toBeGreaterThan(8);
    const entered = new Set<string>();
    for (const t of committed) {
      const to = commitsToOf(t.guard);
      const targets = (t.target ?? []).map((n) => n.path[0]);
      expect(to, guardName(t.guard) ?? "").not.toBeNull();
      expect(targets).toHaveLength(1);
      // Either it enters the one state named, or it starts another commit at once (from that state).
      if (targets[0] === "committing") continue;
      expect(to).toEqual([targets[0]]);
      entered.add(targets[0] as string);
    }
    // Every state a change can go to is entered by some COMMITTED edge.
    for (const to of LIFECYCLE_STATES) if (validFrom[to].length > 0) expect(entered).toContain(to);
  });

  it("every lifecycle state is a top-level state of the machine", () => {
    const keys = Object.keys(mirrorPartitionMachine.root.states);
    for (const s of LIFECYCLE_STATES) expect(keys).toContain(s);
  });
});
