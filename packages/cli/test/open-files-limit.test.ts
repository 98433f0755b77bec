import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "./cli-harness";

const here = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(here, "fixtures", "many-partitions.ts");
const ROOT = path.join(here, "..", "..", "..");
/**
 * Partitions of the test (OPEN_FILES_PARTITIONS=10000 runs the full size): 10,000 take 20-60 s per phase
 * on a busy two-core machine (creating 10,000 directories of files), so the suite runs 2,000, twice what
 * `ulimit -n 1024` allows a log that keeps every segment open.
 */
const PARTITIONS = Number(process.env.OPEN_FILES_PARTITIONS ?? 2000);
const FD_LIMIT = 1024;
/**
 * The most descriptors the node may hold: log.max.open.files (default 256, `DEFAULT_MAX_OPEN_FILES` of
 * @cluster-mirror/log) plus what Node itself keeps open (about 30: stdio, the event loop, the loader).
 */
const MAX_FDS = 256 + 64;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

interface ChildReport {
  values: string[];
  maxFds: number;
  startMs: number;
  totalMs: number;
}

/** Runs the fixture under `ulimit -n 1024` (as a user shell would) and returns its report. */
function runUnderLimit(dataDir: string, phase: "create" | "restart"): ChildReport {
  const script = `ulimit -n ${FD_LIMIT} && exec "$0" --import tsx "$@"`;
  const child = spawnSync(
    "bash",
    ["-c", script, process.execPath, CHILD, dataDir, phase, String(PARTITIONS)],
    {
      cwd: ROOT,
      encoding: "utf8",
      maxBuffer: 64 << 20,
    },
  );
  if (child.status !== 0) {
    throw new Error(`${phase} exited ${child.status}: ${child.stderr.slice(-2000)}`);
  }
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as ChildReport;
}

describe("open segment files are bounded (log.max.open.files)", () => {
  it(`a node with ${PARTITIONS} partitions starts, serves produce/fetch and restarts under ulimit -n ${FD_LIMIT}`, () => {
    const dataDir = tempDir("open-files");
    dirs.push(dataDir);
    const created = runUnderLimit(dataDir, "create");
    expect(created.values).toEqual(Array.from({ length: PARTITIONS }, (_, p) => `a${p}`));
    expect(created.maxFds).toBeLessThanOrEqual(MAX_FDS);

    // The restart recovers every log from the same data dir, under the same limit.
    const restarted = runUnderLimit(dataDir, "restart");
    expect(restarted.values).toEqual(Array.from({ length: PARTITIONS }, (_, p) => `a${p},b${p}`));
    expect(restarted.maxFds).toBeLessThanOrEqual(MAX_FDS);
    console.log(
      `${PARTITIONS} partitions under ulimit -n ${FD_LIMIT}: create max ${created.maxFds} fds in ${created.totalMs} ms; ` +
        `restart recovered in ${restarted.startMs} ms, max ${restarted.maxFds} fds, ${restarted.totalMs} ms in all`,
    );
  }, 300_000);
});
