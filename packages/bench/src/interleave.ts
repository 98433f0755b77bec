import type { Run } from "./embedded-mirror";

/** The median of `xs` (the upper one of the two middle values for an even count). */
export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Medians of a side's runs: MB/s by the wall clock, MB per CPU-second, and the CPU and system ms per run. */
export interface SideFigures {
  mbps: number;
  mbpsPerCore: number;
  cpuMs: number;
  sysMs: number;
  /** Minor page faults per run. */
  pageFaults: number;
  ms: number;
  runs: number;
}

/** The medians of `runs` (each run's own rate, so runs of different sizes compare). */
export function figures(runs: readonly Run[]): SideFigures {
  return {
    mbps: median(runs.map((r) => r.bytes / 1e6 / (r.ms / 1000))),
    mbpsPerCore: median(runs.map((r) => r.bytes / 1e6 / (r.cpuMs / 1000))),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    sysMs: median(runs.map((r) => r.sysMs)),
    pageFaults: median(runs.map((r) => r.pageFaults)),
    ms: median(runs.map((r) => r.ms)),
    runs: runs.length,
  };
}

/**
 * Runs each side once per round, in turn (A, B, C, A, B, C, ...), after one warm-up round that is not
 * counted, so that a slow spell of a shared machine hits every side alike; returns each side's runs.
 */
export async function interleaved(
  rounds: number,
  sides: Readonly<Record<string, (round: number) => Promise<Run>>>,
): Promise<Record<string, Run[]>> {
  const keys = Object.keys(sides);
  const out: Record<string, Run[]> = Object.fromEntries(keys.map((k) => [k, []]));
  for (let round = 0; round <= rounds; round++) {
    for (const key of keys) {
      const run = await sides[key]!(round);
      if (round > 0) out[key]!.push(run);
    }
  }
  return out;
}

/** "812 MB per CPU-second, 12 ms CPU (4 sys, 8,190 page faults) in 20 ms wall" for a note. */
export function cpuNote(f: SideFigures): string {
  return `${f.mbpsPerCore.toFixed(0)} MB per CPU-second, ${f.cpuMs.toFixed(0)} ms CPU (${f.sysMs.toFixed(0)} sys, ${f.pageFaults.toLocaleString("en-US")} page faults) in ${f.ms.toFixed(0)} ms wall`;
}
