import * as fs from "node:fs";
import * as path from "node:path";
import { DataDirLockedError, ManualClock, ManualScheduler } from "@cluster-mirror/cluster";
import { afterEach, describe, expect, it } from "vitest";
import { MirrorNode } from "../src/node/mirror-node";
import { BIN, failureLine, freePort, getJson, killAll, spawnBin, startNode, tempDir } from "./cli-harness";

afterEach(() => killAll());

/** Kafka's lock file name in a data dir. */
const LOCK_FILE = ".lock";

/** Every path under `dir` with its content (what "changes nothing" compares). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        out[`${path.relative(dir, p)}/`] = "dir";
        walk(p);
      } else out[path.relative(dir, p)] = fs.readFileSync(p).toString("base64");
    }
  };
  walk(dir);
  return out;
}

function inProcessNode(dataDir: string, sources: string[]): MirrorNode {
  const clock = new ManualClock(1_700_000_000_000);
  return MirrorNode.start({
    name: "dr",
    brokers: 3,
    dataDir,
    sources: sources.map((name) => ({ name, brokers: 1 })),
    numStatePartitions: 2,
    fsync: false,
    clock,
    scheduler: new ManualScheduler(clock),
  });
}

describe("one node per data dir", () => {
  it("a second node on the same data dir fails before it writes anything, even with other sources", () => {
    const dir = tempDir("cm-lock");
    const first = inProcessNode(dir, ["primary"]);
    try {
      const before = snapshot(dir);
      let error: unknown;
      try {
        inProcessNode(dir, ["other"]).close();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DataDirLockedError);
      expect(before[LOCK_FILE]).toBeDefined();
      expect(before[path.join("sources", "primary", LOCK_FILE)]).toBeDefined();
      expect((error as DataDirLockedError).dir).toBe(dir);
      expect(snapshot(dir)).toEqual(before); // no sources/other, no lock, nothing rewritten
    } finally {
      first.close();
    }
    // Closed: every lock is released and the dir starts again.
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    expect(fs.existsSync(path.join(dir, "sources", "primary", LOCK_FILE))).toBe(false);
    inProcessNode(dir, ["primary"]).close();
  });

  it("`cluster-mirror node` on a data dir another node runs on exits 1 and says which dir and what to do", async () => {
    const dir = tempDir("cm-lock-cli");
    const first = await startNode(dir);
    const lockBefore = fs.existsSync(path.join(dir, LOCK_FILE))
      ? fs.readFileSync(path.join(dir, LOCK_FILE), "utf8")
      : undefined;

    const second = spawnBin(BIN.clusterMirror, [
      "node",
      "--data-dir",
      dir,
      "--port",
      String(await freePort()),
      "--metrics-port",
      String(await freePort()),
      "--source",
      "primary=3",
    ]);
    let stdout = "";
    let stderr = "";
    second.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    second.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    // Ends either way: a node that starts logs node.started (then it is killed, failing the test).
    const outcome = await new Promise<{ code: number | null } | "started">((resolve) => {
      second.stdout?.on("data", () => {
        if (stdout.includes('"event":"node.started"')) resolve("started");
      });
      second.once("close", (code) => resolve({ code }));
    });
    expect(outcome, stdout).toEqual({ code: 1 });
    const line = failureLine({ code: 1, stdout, stderr });
    expect(line).toContain(`data dir ${dir} is in use by process ${first.child.pid}`);
    expect(line).toContain("Stop the other node, or use another --data-dir");
    // Nothing on stdout but the log line saying it was starting.
    const events = stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => (JSON.parse(l) as { event?: string }).event);
    expect(events).toEqual(["node.starting"]);

    // The first node still owns the dir and serves.
    expect(lockBefore).toContain(`pid=${first.child.pid}\n`);
    expect(fs.readFileSync(path.join(dir, LOCK_FILE), "utf8")).toBe(lockBefore);
    expect((await getJson<{ clusters: unknown[] }>(first.port, "/v1/health")).clusters).toHaveLength(2);
  });
});
