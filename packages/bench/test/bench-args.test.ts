import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { BenchUsageError, parseBenchArgs } from "../src/args";

const SUITES = ["protocol", "log", "log-maintenance", "mirror-coordinator", "real-broker-mirror"];

describe("parseBenchArgs", () => {
  it("runs every suite without arguments, and the suites a filter names", () => {
    expect(parseBenchArgs([], SUITES)).toEqual({ kind: "run", filters: [] });
    expect(parseBenchArgs(["--", "mirror-coordinator"], SUITES)).toEqual({
      kind: "run",
      filters: ["mirror-coordinator"],
    });
  });

  it("answers --help and -h with the usage, whatever else is given", () => {
    expect(parseBenchArgs(["--help"], SUITES)).toEqual({ kind: "help" });
    expect(parseBenchArgs(["log", "-h"], SUITES)).toEqual({ kind: "help" });
  });

  it("refuses a filter no suite contains, naming the suites", () => {
    expect(() => parseBenchArgs(["mirror-coordnator"], SUITES)).toThrow(BenchUsageError);
    expect(() => parseBenchArgs(["mirror-coordnator"], SUITES)).toThrow(
      /no suite's name contains 'mirror-coordnator': the suites are protocol, log, .*real-broker-mirror/,
    );
    expect(() => parseBenchArgs([""], SUITES)).toThrow(/a filter is empty/);
  });

  it("refuses an option it does not know", () => {
    expect(() => parseBenchArgs(["--suite", "log"], SUITES)).toThrow(/unknown option '--suite'/);
  });
});

const main = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "main.ts");
const cwd = mkdtempSync(join(tmpdir(), "bench-args-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Runs `pnpm bench ARGS` as its script does, in `cwd`, where an earlier run left its results. */
async function bench(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  writeFileSync(join(cwd, "bench-results.json"), "[earlier results]\n");
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", main, ...args],
      {
        cwd: dirname(main),
        env: { ...process.env, INIT_CWD: cwd },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("pnpm bench's command line", () => {
  it("--help prints the usage with the suites, runs nothing and leaves bench-results.json alone", async () => {
    const { code, stdout } = await bench("--help");
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: pnpm bench [FILTER...]");
    expect(stdout).toMatch(/Suites: .*mirror-coordinator/);
    expect(readFileSync(join(cwd, "bench-results.json"), "utf8")).toBe("[earlier results]\n");
  });

  it("a misspelt suite is a usage error (exit 2, one line, no stack) and leaves bench-results.json alone", async () => {
    const { code, stderr } = await bench("mirror-coordnator");
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^Error: no suite's name contains 'mirror-coordnator': the suites are .*mirror-coordinator/,
      ),
    ]);
    expect(readFileSync(join(cwd, "bench-results.json"), "utf8")).toBe("[earlier results]\n");
  });
});
