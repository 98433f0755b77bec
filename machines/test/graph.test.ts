import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_BACKOFF,
  LIFECYCLE_STATES,
  MACHINES,
  type MachineGraphNode,
  machineGraphs,
  retryBackoffCeilingMs,
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
      source: "mirrorPartition.MIRRORING",
      targets: ["mirrorPartition.committing"],
      event: "PAUSE",
      guard: null,
      actions: ["prepareCommit"],
      commitTo: "PAUSING",
    });
    expect(g.transitions).toContainEqual({
      source: "mirrorPartition.committing.appending",
      targets: ["mirrorPartition.PAUSING"],
      event: "COMMITTED",
      guard: "and(pendingMatches, commitsTo(PAUSING))",
      actions: ["applyCommit"],
      commitTo: null,
    });
    // No `after` delays anywhere: timers belong to the runtime (they are lost on restore).
    for (const graph of Object.values(graphs)) {
      for (const t of graph.transitions) expect(t.event, t.source).not.toMatch(/^xstate\.after/);
    }
    expect(graphs.coordinatorShard.root.children.map((c) => c.key)).toEqual([
      "INITIAL",
      "LOADING",
      "ACTIVE",
      "FAILED",
      "CLOSED",
    ]);
    expect(graphs.fetcher.root.children.map((c) => c.key)).toEqual([
      "idle",
      "routing",
      "fetching",
      "throttleCheck",
      "backingOff",
      "throttled",
      "waiting",
      "stopped",
    ]);
  });

  it("render as Mermaid stateDiagram-v2: every edge between states declared in the same block", () => {
    for (const machine of Object.values(MACHINES)) {
      const text = toMermaid(machine);
      expect(text.startsWith("stateDiagram-v2\n")).toBe(true);
      // A stack of blocks; each block knows the states declared directly in it.
      const blocks: { declared: Set<string>; lines: string[] }[] = [
        { declared: new Set(["[*]"]), lines: [] },
      ];
      const closed: { declared: Set<string>; lines: string[] }[] = [];
      let inNote = false;
      for (const raw of text.split("\n").slice(1)) {
        const line = raw.trim();
        const top = blocks.at(-1) as { declared: Set<string>; lines: string[] };
        if (inNote) {
          if (line === "end note") inNote = false;
          continue;
        }
        const decl = /^state "[^"]*" as (\w+)( \{)?$/.exec(line);
        if (decl) {
          top.declared.add(decl[1] as string);
          if (decl[2]) blocks.push({ declared: new Set(["[*]"]), lines: [] });
          continue;
        }
        if (line === "}") {
          closed.push(blocks.pop() as { declared: Set<string>; lines: string[] });
          continue;
        }
        if (line === "--") {
          expect(blocks.length, "`--` only inside a composite state").toBeGreaterThan(1);
          continue;
        }
        const note = /^note right of (\w+)$/.exec(line);
        if (note) {
          top.lines.push(`note ${note[1]}`);
          inNote = true;
          continue;
        }
        if (line !== "") top.lines.push(line);
      }
      closed.push(...blocks);
      for (const block of closed) {
        for (const line of block.lines) {
          const edge = /^(\S+) --> (\S+)/.exec(line);
          const note = /^note (\w+)$/.exec(line);
          if (edge) {
            expect(block.declared, line).toContain(edge[1]);
            expect(block.declared, line).toContain(edge[2]);
          } else if (note) {
            expect(block.declared, line).toContain(note[1]);
          } else {
            expect.fail(`unexpected Mermaid line: ${line}`);
          }
        }
      }
    }
    const partition = toMermaid(MACHINES.mirrorPartition);
    // Lifecycle changes are drawn to the state they ask for (spec §4's lifecycle), not to the commit step.
    expect(partition).toContain(
      "  mirrorPartition_PREPARING --> mirrorPartition_MIRRORING : ISR_TRUNCATED [currentEpoch]",
    );
    expect(partition).not.toMatch(/mirrorPartition_(?!committing)\w+ --> mirrorPartition_committing /);
    expect(partition).not.toContain("any step");
  });
});

describe("retry backoff", () => {
  it("is floor(r * min(cap, base * 2^attempt)), and the ceiling doubles until the cap", () => {
    // numRuns 500.
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 400_000 }),
        (attempt, r, base, cap) => {
          const options = { baseMs: base, capMs: cap, maxAttempts: 10 };
          const ceiling = Math.min(cap, base * 2 ** attempt);
          expect(retryBackoffCeilingMs(attempt, options)).toBe(ceiling);
          expect(retryBackoffDelayMs(attempt, r, options)).toBe(Math.floor(r * ceiling));
          const next = retryBackoffCeilingMs(attempt + 1, options);
          expect(next).toBe(ceiling >= cap ? cap : Math.min(cap, 2 * ceiling));
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
    expect(DEFAULT_RETRY_BACKOFF).toEqual({ baseMs: 1000, capMs: 300_000, maxAttempts: 10 });
  });
});
