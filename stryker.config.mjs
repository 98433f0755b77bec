// Mutation testing: `pnpm test:mutation`. Not part of `pnpm test` or CI (a full run takes long).
// Mutates the XState machines and the mirror's coordinator and fetcher, and runs only the tests that
// exercise them, so a surviving mutant points at behaviour no test pins down.
// Narrow a run to one area with --mutate, e.g.
//   pnpm test:mutation --mutate 'packages/mirror/src/fetcher/**/*.ts'

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: "pnpm",
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  // related: false because testFiles below already names the tests; vitest's import graph would add
  // nothing and its related mode misses tests that reach a source through a workspace package.
  vitest: { configFile: "vitest.config.ts", related: false },
  coverageAnalysis: "perTest",
  // Static mutants (module-level code such as a machine's config object) can only be killed by reloading
  // every test file, once per mutant: about 20% of the mutants and two thirds of the run time. Skipped by
  // default; include them with --ignoreStatic false.
  ignoreStatic: true,
  // String mutants here are log and error texts (state names sit in the static machine configs above):
  // many slow survivors that say nothing about behaviour.
  mutator: { excludedMutations: ["StringLiteral"] },
  // The reference machine has 2 cores shared with other work; one worker keeps timings stable.
  concurrency: 1,
  mutate: [
    "machines/src/**/*.ts",
    "packages/mirror/src/coordinator/**/*.ts",
    "packages/mirror/src/fetcher/**/*.ts",
  ],
  testFiles: ["machines/test/**/*.test.ts", "packages/mirror/test/**/*.test.ts"],
  // Not needed by those tests; keeps the sandbox copy small.
  ignorePatterns: ["reports", "packages/cli", "packages/bench", ".tmp", "test/.tmp"],
  timeoutMS: 10_000,
  timeoutFactor: 2,
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  clearTextReporter: { allowColor: false, reportTests: false, reportMutants: false, reportScoreTable: true },
  thresholds: { high: 80, low: 60, break: null },
};
