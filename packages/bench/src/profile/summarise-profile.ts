import { readFileSync } from "node:fs";
import { relative } from "node:path";

/** The parts of a V8 `.cpuprofile` (as `node --cpu-prof` writes it) read here. */
interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Prints the top-N functions by self time of a V8 CPU profile as a markdown table: the time spent in the
 * function's own code, not in what it calls. The file may hold one profile or an array of them (merged).
 * Usage: `tsx summarise-profile.ts <file.cpuprofile> [N]`.
 */
function main(): void {
  const [file, n] = process.argv.slice(2);
  if (!file) throw new Error("usage: summarise-profile.ts <file.cpuprofile> [N]");
  const top = Number(n ?? 10);
  const parsed = JSON.parse(readFileSync(file, "utf8")) as CpuProfile | CpuProfile[];
  const selfUs = new Map<string, number>();
  let total = 0;
  for (const profile of Array.isArray(parsed) ? parsed : [parsed]) {
    total += addSelfTimes(profile, selfUs);
  }
  const rows = [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, top);
  console.log(`| # | self ms | self % | function |\n|---|---:|---:|---|`);
  rows.forEach(([key, us], i) => {
    console.log(`| ${i + 1} | ${(us / 1000).toFixed(0)} | ${((100 * us) / total).toFixed(1)} | \`${key}\` |`);
  });
  console.log(
    `\nbusy time sampled (idle and the profiler's own stop left out): ${(total / 1000).toFixed(0)} ms`,
  );
}

/**
 * Adds each function's self time (µs) in `profile` to `selfUs`; returns the profile's busy sampled time.
 * Left out: `(idle)` (waiting, not CPU) and whatever runs under the inspector's `post` (the profiler
 * being stopped from the profiled process itself, which shows up as a native `dispatch`).
 */
function addSelfTimes(profile: CpuProfile, selfUs: Map<string, number>): number {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const profilerOwn = new Set<number>();
  for (const node of profile.nodes) {
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (frame.functionName === "post" && frame.url === "node:inspector") {
        profilerOwn.add(node.id);
        break;
      }
    }
  }
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]!);
    const dt = profile.timeDeltas[i] ?? 0;
    if (!node || profilerOwn.has(node.id) || node.callFrame.functionName === "(idle)") continue;
    total += dt;
    const { functionName, url } = node.callFrame;
    // Native frames of a shared library are named after its nearest exported symbol, which misleads.
    const key = url
      ? `${functionName || "(anonymous)"} (${shorten(url)})`
      : functionName.startsWith("(")
        ? functionName
        : `native: ${functionName}`;
    selfUs.set(key, (selfUs.get(key) ?? 0) + dt);
  }
  return total;
}

function shorten(url: string): string {
  const path = url.replace(/^file:\/\//, "");
  const inRepo = path.indexOf("/packages/");
  if (inRepo >= 0) return path.slice(inRepo + 1);
  const nm = path.lastIndexOf("/node_modules/");
  if (nm >= 0) return path.slice(nm + "/node_modules/".length);
  return path.startsWith("/") ? relative(process.cwd(), path) : path;
}

main();
