import { performance } from "node:perf_hooks";

/** One benchmark figure beside the baseline measured in the same run. */
export interface BenchResult {
  /** What was measured, e.g. `crc32c.16KiB`. */
  name: string;
  /** The measured figure for the implementation under test. */
  value: number;
  /** Unit of `value` and `baseline`, e.g. `MB/s`, `ops/s`, `ms`, `bytes`. */
  unit: string;
  /** The same figure for the baseline (the naive or reference approach), measured in this run. */
  baseline: number;
  /** value / baseline for higher-is-better units, baseline / value for lower-is-better ones. */
  ratio: number;
  /** Human text for the baseline and the target, printed beside the figure. */
  note?: string;
}

/** A suite registers itself by exporting `suite` from a file in `src/suites/`. */
export interface BenchSuite {
  name: string;
  run(): Promise<BenchResult[]> | BenchResult[];
}

/** Units where a smaller figure is better. */
const LOWER_IS_BETTER = new Set(["ms", "s", "bytes", "B", "KiB", "MiB", "ns", "us"]);

/** Builds a result, computing the ratio in the direction that makes "bigger is better". */
export function result(
  name: string,
  value: number,
  unit: string,
  baseline: number,
  note?: string,
): BenchResult {
  const ratio = LOWER_IS_BETTER.has(unit) ? baseline / value : value / baseline;
  return note === undefined
    ? { name, value, unit, baseline, ratio }
    : { name, value, unit, baseline, ratio, note };
}

/**
 * Runs `fn` repeatedly for at least `minMs` (after a warm-up) and returns operations per second,
 * where each call of `fn` counts as `opsPerCall` operations. The benchmark may read the clock: it is not logic.
 */
export function measureOpsPerSecond(fn: () => void, opsPerCall = 1, minMs = 500): number {
  const warmUntil = performance.now() + Math.min(200, minMs / 2);
  while (performance.now() < warmUntil) fn();
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    fn();
    calls++;
    elapsed = performance.now() - start;
  } while (elapsed < minMs);
  return (calls * opsPerCall * 1000) / elapsed;
}

/** Times one call of `fn` in milliseconds. */
export function timeOnceMs(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

/** Times one call of an async `fn` in milliseconds. */
export async function timeOnceMsAsync(fn: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}
