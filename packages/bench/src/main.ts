import { readdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { BenchResult, BenchSuite } from "./harness";

/**
 * Runs every suite in `src/suites/` (or those whose name contains an argument), prints each figure beside
 * its baseline, and writes `bench-results.json` in the working directory.
 */
async function main(): Promise<void> {
  const filters = process.argv.slice(2);
  const here = dirname(fileURLToPath(import.meta.url));
  const dir = join(here, "suites");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".ts")).sort();
  const all: BenchResult[] = [];
  for (const file of files) {
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as { suite?: BenchSuite };
    const suite = mod.suite;
    if (!suite) continue;
    if (filters.length > 0 && !filters.some((f) => suite.name.includes(f))) continue;
    console.log(`\n== ${suite.name}`);
    const results = await suite.run();
    for (const r of results) {
      console.log(
        `${r.name.padEnd(48)} ${fmt(r.value).padStart(12)} ${r.unit.padEnd(9)} baseline ${fmt(r.baseline).padStart(12)}  ratio ${r.ratio.toFixed(2)}x${r.note ? `  (${r.note})` : ""}`,
      );
    }
    all.push(...results);
  }
  const out = join(process.env.INIT_CWD ?? process.cwd(), "bench-results.json");
  await writeFile(out, `${JSON.stringify(all, null, 2)}\n`);
  console.log(`\nwrote ${all.length} results to ${out}`);
}

function fmt(n: number): string {
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 1) return n.toFixed(2);
  return n.toPrecision(3);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
