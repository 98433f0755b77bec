import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BenchUsageError, benchUsage, parseBenchArgs } from "./args";
import type { BenchResult, BenchSuite } from "./harness";

/**
 * Runs every suite in `src/suites/` (or those whose name contains an argument), each in a child process of
 * its own (same Node flags) so that no suite inherits another's heap or JIT state, prints each figure
 * beside its baseline, and writes `bench-results.json` in the working directory.
 */
async function main(): Promise<void> {
  const here = dirname(fileURLToPath(import.meta.url));
  const dir = join(here, "suites");
  const only = process.env.BENCH_SUITE_FILE;
  if (only !== undefined) {
    await runOne(join(dir, only), process.env.BENCH_RESULTS_OUT);
    return;
  }
  const suites: { file: string; suite: BenchSuite }[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith(".ts")).sort()) {
    const suite = await load(join(dir, file));
    if (suite) suites.push({ file, suite });
  }
  const names = suites.map((s) => s.suite.name);
  const command = parseBenchArgs(process.argv.slice(2), names);
  if (command.kind === "help") {
    console.log(benchUsage(names));
    return;
  }
  const { filters } = command;
  const all: BenchResult[] = [];
  const scratch = await mkdtemp(join(tmpdir(), "cluster-mirror-bench-"));
  try {
    for (const { file, suite } of suites) {
      if (filters.length > 0 && !filters.some((f) => suite.name.includes(f))) continue;
      const out = join(scratch, `${file}.json`);
      const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
        env: { ...process.env, BENCH_SUITE_FILE: file, BENCH_RESULTS_OUT: out },
        stdio: "inherit",
      });
      if (child.status !== 0) {
        const why = child.error?.message ?? `exit ${child.status ?? child.signal}`;
        throw new Error(`suite ${suite.name} failed (${why})`);
      }
      all.push(...(JSON.parse(await readFile(out, "utf8")) as BenchResult[]));
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const out = join(process.env.INIT_CWD ?? process.cwd(), "bench-results.json");
  await writeFile(out, `${JSON.stringify(all, null, 2)}\n`);
  console.log(`\nwrote ${all.length} results to ${out}`);
}

async function load(file: string): Promise<BenchSuite | undefined> {
  return ((await import(pathToFileURL(file).href)) as { suite?: BenchSuite }).suite;
}

/** Runs one suite in this process, prints its figures and writes them to `out` as JSON. */
async function runOne(file: string, out: string | undefined): Promise<void> {
  const suite = await load(file);
  if (!suite) throw new Error(`${file} exports no suite`);
  console.log(`\n== ${suite.name}`);
  const results = await suite.run();
  for (const r of results) {
    console.log(
      `${r.name.padEnd(48)} ${fmt(r.value).padStart(12)} ${r.unit.padEnd(9)} baseline ${fmt(r.baseline).padStart(12)}  ratio ${r.ratio.toFixed(2)}x${r.note ? `  (${r.note})` : ""}`,
    );
  }
  if (out !== undefined) await writeFile(out, JSON.stringify(results));
}

function fmt(n: number): string {
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 1) return n.toFixed(2);
  return n.toPrecision(3);
}

main().catch((err: unknown) => {
  if (err instanceof BenchUsageError) {
    console.error(`Error: ${err.message}`);
    process.exitCode = 2;
    return;
  }
  console.error(err);
  process.exitCode = 1;
});
