import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, failureLine, freePort, killAll, run, tempDir } from "./cli-harness";

afterEach(() => killAll());

/** Holds a port with a listening server, as another program would. */
function occupyPort(): Promise<{ port: number; release: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      resolve({ port, release: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

// Each case runs the real bin and waits for the process to exit: a process that stays up fails the test
// by its timeout, never by measuring time.
describe("startup errors exit non-zero (issue 15)", () => {
  it("node --source with a bad meta.properties prints the error and exits 1", async () => {
    const dir = tempDir("cm-badmeta");
    fs.mkdirSync(path.join(dir, "sources", "primary"), { recursive: true });
    fs.writeFileSync(path.join(dir, "sources", "primary", "meta.properties"), "version=1\n");
    const r = await run(BIN.clusterMirror, [
      "node",
      "--data-dir",
      dir,
      "--source",
      "primary=3",
      "--port",
      "0",
      "--metrics-port",
      "0",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/meta\.properties has no cluster\.id/);
  }, 60_000);

  it("node --port 70000 is refused (exit 2) before any cluster starts on the data dir", async () => {
    const dir = path.join(tempDir("cm-port"), "data");
    const r = await run(BIN.clusterMirror, ["node", "--data-dir", dir, "--port", "70000"]);
    expect(r.code).toBe(2);
    expect(failureLine(r)).toBe("Error: --port must be an integer from 0 to 65535, got '70000'");
    expect(fs.existsSync(dir)).toBe(false);
  }, 60_000);

  it("demo --port 70000 is refused (exit 2) before the demo runs", async () => {
    const r = await run(BIN.clusterMirror, ["demo", "--keep-running", "--port", "70000"]);
    expect(r.code).toBe(2);
    expect(failureLine(r)).toMatch(/--port must be an integer from 0 to 65535/);
    expect(r.stdout).toBe("");
  }, 60_000);

  it("node --data-dir under /proc fails with a clear error and exit 1", async () => {
    const r = await run(BIN.clusterMirror, ["node", "--data-dir", "/proc/nope", "--port", "0"]);
    expect(r.code).toBe(1);
    expect(failureLine(r)).toMatch(/^Error: cannot use --data-dir \/proc\/nope \(ENOENT\)/);
  }, 60_000);

  it("node --data-dir on a regular file fails with a clear error and exit 1", async () => {
    const file = path.join(tempDir("cm-file"), "f");
    fs.writeFileSync(file, "x");
    const r = await run(BIN.clusterMirror, ["node", "--data-dir", file, "--port", "0"]);
    expect(r.code).toBe(1);
    expect(failureLine(r)).toMatch(/^Error: cannot use --data-dir \S+ \(ENOTDIR\)/);
  }, 60_000);

  it("demo --keep-running with its port in use prints EADDRINUSE and exits 1", async () => {
    const held = await occupyPort();
    try {
      const r = await run(BIN.clusterMirror, ["demo", "--keep-running", "--port", String(held.port)]);
      expect(r.code).toBe(1);
      expect(failureLine(r)).toMatch(/EADDRINUSE/);
      expect(r.stdout).not.toContain("Still running");
    } finally {
      await held.release();
    }
  }, 60_000);

  it("node with its admin port in use exits 1", async () => {
    const held = await occupyPort();
    try {
      const r = await run(BIN.clusterMirror, [
        "node",
        "--data-dir",
        tempDir("cm-busy"),
        "--port",
        String(held.port),
        "--metrics-port",
        String(await freePort()),
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/EADDRINUSE/);
    } finally {
      await held.release();
    }
  }, 60_000);
});
