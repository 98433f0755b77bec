/**
 * Records what each scenario in `scenarios/*.json` ends with (its `expected` field), by running its `spec`
 * on the simulator in Node: `pnpm --filter @cluster-mirror/visualizer run scenarios` after a deliberate
 * change of behaviour, then review the diff. The browser runner and `scenario-replay.test.ts` must both
 * reproduce it exactly.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { runScenario } from "../src/scenario/scenario";

const dir = new URL("../scenarios/", import.meta.url).pathname;
for (const file of readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .sort()) {
  const path = `${dir}${file}`;
  const { spec } = JSON.parse(readFileSync(path, "utf8"));
  const started = performance.now();
  const expected = await runScenario(spec);
  writeFileSync(path, `${JSON.stringify({ spec, expected }, null, 2)}\n`);
  console.log(
    `${file}: ${expected.partitions.length} mirror partitions, ${expected.violations.length} violations, ${Math.round(performance.now() - started)} ms`,
  );
}
execFileSync("npx", ["biome", "format", "--write", dir], { stdio: "inherit" });
