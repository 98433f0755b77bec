import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseVizArgs, VizUsageError } from "../scripts/viz-args";

describe("parseVizArgs", () => {
  it("serves on 5173 by default, or on --port N / --port=N", () => {
    expect(parseVizArgs([])).toEqual({ kind: "serve", port: 5173 });
    expect(parseVizArgs(["--port", "6001"])).toEqual({ kind: "serve", port: 6001 });
    expect(parseVizArgs(["--", "--port=6002"])).toEqual({ kind: "serve", port: 6002 });
  });

  it("answers --help and -h with the usage", () => {
    expect(parseVizArgs(["--help"])).toEqual({ kind: "help" });
    expect(parseVizArgs(["--port", "6001", "-h"])).toEqual({ kind: "help" });
  });

  it("refuses a port that is not one, a missing or repeated --port, and unknown arguments", () => {
    for (const port of ["abc", "0", "-1", "65536", "1e3", "80.5", ""]) {
      expect(() => parseVizArgs(["--port", port])).toThrow(VizUsageError);
      expect(() => parseVizArgs(["--port", port])).toThrow(
        `--port must be an integer from 1 to 65535, got '${port}'`,
      );
    }
    expect(() => parseVizArgs(["--port"])).toThrow("--port must be an integer from 1 to 65535, got nothing");
    expect(() => parseVizArgs(["--port", "6001", "--port", "6002"])).toThrow("--port is given twice");
    expect(() => parseVizArgs(["--prot", "6001"])).toThrow("unknown argument '--prot'");
  });
});

const viz = join(dirname(fileURLToPath(import.meta.url)), "..", "scripts", "viz.ts");

/** Runs `pnpm viz ARGS` as its script does; a run that starts the server instead is killed after 20 s. */
async function runViz(...args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", viz, ...args],
      {
        cwd: dirname(viz),
        timeout: 20_000,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number | null; signal: string | null; stdout: string; stderr: string };
    return { code: e.code ?? `killed by ${e.signal}`, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("pnpm viz's command line", () => {
  it("--help prints the usage and exits 0 without starting a server", async () => {
    const { code, stdout } = await runViz("--help");
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: pnpm viz [--port N]");
    expect(stdout).not.toContain("Scenario runner:");
  });

  it("--port abc is a usage error: exit 2 and one line, not Vite's stack trace", async () => {
    const { code, stderr } = await runViz("--port", "abc");
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toEqual([
      "Error: --port must be an integer from 1 to 65535, got 'abc' (e.g. --port 5173)",
    ]);
  });
});
