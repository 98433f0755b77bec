/** What `pnpm bench [args]` asks for: its usage, or the suites to run. */
export type BenchCommand = { kind: "help" } | { kind: "run"; filters: string[] };

/** A command line `pnpm bench` cannot run: says what was wrong and what to pass instead. Nothing ran. */
export class BenchUsageError extends Error {
  readonly code = "INVALID_ARGUMENT";
  override readonly name = "BenchUsageError";
}

/** The usage text of `pnpm bench`, naming the suites it can run. */
export function benchUsage(suiteNames: readonly string[]): string {
  return [
    "Usage: pnpm bench [FILTER...]",
    "",
    "Runs every benchmark suite, or each suite whose name contains a FILTER, each in a child process of",
    "its own; prints each figure beside its baseline and writes bench-results.json in the working directory.",
    "",
    `Suites: ${suiteNames.join(", ")}`,
    "",
    "Options:",
    "  -h, --help  print this text and run nothing",
  ].join("\n");
}

/**
 * Reads `pnpm bench`'s arguments against the suites there are. A flag other than `--help`, or a filter no
 * suite name contains, is a BenchUsageError, so a typo never runs nothing and overwrites
 * bench-results.json with an empty list.
 */
export function parseBenchArgs(args: readonly string[], suiteNames: readonly string[]): BenchCommand {
  const filters: string[] = [];
  for (const arg of args) {
    if (arg === "--") continue;
    if (arg === "-h" || arg === "--help") return { kind: "help" };
    if (arg.startsWith("-")) {
      throw new BenchUsageError(
        `unknown option '${arg}': pnpm bench takes only suite filters (e.g. pnpm bench mirror-coordinator) or --help`,
      );
    }
    if (arg.trim() === "") {
      throw new BenchUsageError(
        `a filter is empty: pass part of a suite's name (${suiteNames.join(", ")}), or none to run every suite`,
      );
    }
    if (!suiteNames.some((name) => name.includes(arg))) {
      throw new BenchUsageError(
        `no suite's name contains '${arg}': the suites are ${suiteNames.join(", ")} (pnpm bench --help)`,
      );
    }
    filters.push(arg);
  }
  return { kind: "run", filters };
}
