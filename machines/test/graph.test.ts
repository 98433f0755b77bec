import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  LIFECYCLE_STATES,
  MACHINES,
  type MachineGraphNode,
  machineGraphs,
  retryBackoffDelayMs,
  toMermaid,
} from "../src/index";

const SEED = Number(process.env.FC_SEED ?? 20261129);

function find(node: MachineGraphNode, id: string): MachineGraphNode | undefined {
  if (node.id === id) return node;
  for (const c of node.children) {
    const hit = find(c, id);
    if (hit) return hit;
  }
  return undefined;
}

describe("machine graphs", () => {
  it("are JSON with states, parallel regions and transitions with event names", () => {
    const graphs = machineGraphs();
    const g = JSON.parse(JSON.stringify(graphs.mirrorPartition)) as typeof graphs.mirrorPartition;
    for (const s of LIFECYCLE_STATES) expect(find(g.root, `mirrorPartition.${s}`)).toBeDefined();
    const parallel = find(g.root, "mirrorPartition.STOPPING.recordingLmeAndBumpingEpoch");
    expect(parallel?.type).toBe("parallel");
    expect(parallel?.children.map((c) => c.key)).toEqual(["lastMirrorEpoch", "leaderEpoch"]);
    expect(g.transitions).toContainEqual({
      source: "mirrorPartition.MIRRORING.committing_PAUSING",
      targets: ["mirrorPartition.PAUSING"],
      event: "COMMITTED",
      guard: null,
      actions: ["applyCommit"],
    });
    expect(graphs.coordinatorShard.root.children.map((c) => c.key)).toEqual([
      "INITIAL",
      "LOADING",
      "ACTIVE",
      "FAILED",
      "CLOSED",
    ]);
    expect(graphs.fetcher.root.children.map((c) => c.key)).toEqual([
      "idle",
      "fetching",
      "backingOff",
      "throttled",
      "stopped",
    ]);
  });

  it("render as Mermaid stateDiagram-v2 with every state declared before use", () => {
    for (const machine of Object.values(MACHINES)) {
      const text = toMermaid(machine);
      expect(text.startsWith("stateDiagram-v2\n")).toBe(true);
      const declared = new Set([...text.matchAll(/ as (\w+)/g)].map((m) => m[1]));
      for (const m of text.matchAll(/^\s*(\w+) --> (\w+)/gm)) {
        expect(declared, m[0]).toContain(m[1]);
        expect(declared, m[0]).toContain(m[2]);
      }
    }
    expect(toMermaid(MACHINES.mirrorPartition)).toContain("  --\n");
  });
});

describe("retry backoff", () => {
  it("is full jitter under a capped exponential ceiling", () => {
    // numRuns 500.
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, r) => {
          const options = { baseMs: 1000, capMs: 60_000, maxAttempts: 10 };
          const d = retryBackoffDelayMs(attempt, r, options);
          expect(d).toBeGreaterThanOrEqual(0);
          expect(d).toBeLessThanOrEqual(Math.min(60_000, 1000 * 2 ** attempt));
          expect(retryBackoffDelayMs(attempt, r, options)).toBe(d);
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
  });
});
