import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
// The nodes these tests start leave their admin-token pointers here (inherited by every spawned node and
// CLI), not in the user's ~/.cluster-mirror/run.
process.env.CLUSTER_MIRROR_RUNTIME_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "cm-runtime-"));
/** The CLI entry points. */
export const BIN = {
  clusterMirror: path.join(here, "..", "bin", "cluster-mirror.mjs"),
  kafkaMirrors: path.join(here, "..", "bin", "kafka-mirrors.mjs"),
};

/** What a finished CLI process printed and returned. */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const children = new Set<ChildProcess>();

/** Kills every child process still running (call in afterEach). */
export function killAll(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  children.clear();
}

/** A free TCP port on 127.0.0.1 (listen on 0, read it back, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A fresh temp dir. */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
}

/** Spawns a bin with args (cwd: the temp dir, to prove it runs from anywhere). */
export function spawnBin(bin: string, args: readonly string[]): ChildProcess {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: os.tmpdir(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** The exit code, stdout and stderr of `child` once it ended. */
export function ended(child: ChildProcess): Promise<RunResult> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

/** Runs a bin to completion. */
export function run(bin: string, args: readonly string[]): Promise<RunResult> {
  return ended(spawnBin(bin, args));
}

/** `kafka-mirrors --bootstrap-server :port ...args`. */
export function mirrors(port: number, ...args: string[]): Promise<RunResult> {
  return run(BIN.kafkaMirrors, ["--bootstrap-server", `:${port}`, ...args]);
}

/** `cluster-mirror <command> --bootstrap-server :port ...args`. */
export function cm(command: string, port: number, ...args: string[]): Promise<RunResult> {
  return run(BIN.clusterMirror, [command, "--bootstrap-server", `:${port}`, ...args]);
}

/**
 * The hang guard of a test that spawns CLI processes: generous, because a loaded 2-core machine makes every
 * spawn slow, and never what makes a test pass. Those tests wait on events (a line a process prints, its
 * exit, the node's `/v1/wait` long poll), not on a wall-clock deadline of their own.
 */
export const CLI_TEST_TIMEOUT_MS = 600_000;

/** A running node process and its ports. */
export interface NodeProcess {
  child: ChildProcess;
  port: number;
  metricsPort: number;
  /** The admin token the node wrote to its data dir (`admin.token`). */
  token: string;
  /** Everything it logged so far. */
  output(): string;
}

/**
 * Resolves with the first complete stdout line of `child` that matches `pattern`, counting from the call
 * (call it right after spawning to see every line); rejects with what it printed when the process ends
 * without one.
 */
export function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    let printed = "";
    const onData = (d: Buffer) => {
      printed += d.toString();
      buffered += d.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      const line = lines.find((l) => pattern.test(l));
      if (line !== undefined) finish(() => resolve(line));
    };
    const onClose = (code: number | null, signal: string | null) =>
      finish(() =>
        reject(new Error(`the process ended (${code ?? signal}) without printing ${pattern}:\n${printed}`)),
      );
    const finish = (settle: () => void) => {
      child.stdout?.off("data", onData);
      child.off("close", onClose);
      settle();
    };
    child.stdout?.on("data", onData);
    child.once("close", onClose);
  });
}

/** Resolves when `child` has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * Starts `cluster-mirror node` with an embedded source `primary` and resolves once it logs `node.started`
 * (its endpoints listen then). Without `port` the node picks free ports and the log line names them.
 */
export async function startNode(dataDir: string, port?: number): Promise<NodeProcess> {
  const child = spawnBin(BIN.clusterMirror, [
    "node",
    "--data-dir",
    dataDir,
    "--port",
    String(port ?? 0),
    "--metrics-port",
    "0",
    "--source",
    "primary=3",
    "--state-partitions",
    "4",
    "--log-level",
    "info",
  ]);
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const started = JSON.parse(await waitForLine(child, /"event":"node\.started"/)) as {
    adminPort: number;
    metricsPort: number;
  };
  const token = fs.readFileSync(path.join(dataDir, "admin.token"), "utf8").trim();
  tokens.set(started.adminPort, token);
  return { child, port: started.adminPort, metricsPort: started.metricsPort, token, output: () => output };
}

/** What `/v1/wait` waits for: every partition of the mirror (of `topic`) in `state`, or caught up. */
export type MirrorCondition = { state: string; topic?: string } | { caughtUp: true };

/**
 * Resolves once the node says `condition` holds for `mirror`, through its `/v1/wait` long poll (asked again
 * each time one poll period passes without it; the test's timeout is the only deadline).
 */
export async function waitForMirror(port: number, mirror: string, condition: MirrorCondition): Promise<void> {
  const query = new URLSearchParams({ mirror });
  if ("caughtUp" in condition) query.set("caughtUp", "true");
  else {
    query.set("state", condition.state);
    if (condition.topic !== undefined) query.set("topic", condition.topic);
  }
  for (;;) {
    const answer = await getJson<{ reached: boolean; reason?: string }>(port, `/v1/wait?${query}`);
    if (answer.reached) return;
    console.log(`still waiting for mirror ${mirror}: ${answer.reason}`);
  }
}

/**
 * Polls `predicate` every 100 ms until it holds, for conditions the node has no event or wait route for.
 * No deadline unless `timeoutMs` is given: the test's timeout is the hang guard.
 */
export async function waitFor(
  what: string,
  predicate: () => Promise<boolean> | boolean,
  timeoutMs = Number.POSITIVE_INFINITY,
): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    if (await predicate()) return;
    if (waited >= timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Admin tokens of the nodes `startNode` started, by admin port. */
const tokens = new Map<number, string>();

/** The `Authorization` header for the node on `port` (started by `startNode`). */
export function authHeader(port: number): Record<string, string> {
  const token = tokens.get(port);
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

/** GET a JSON route of the node. */
export async function getJson<T>(port: number, route: string): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, { headers: authHeader(port) });
  if (!res.ok) throw new Error(`${route}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Describe rows through the HTTP route (fast, no process spawn). */
export async function describeRows(
  port: number,
  mirror?: string,
): Promise<{ topic: string; partition: number; state: string; lag: string | null }[]> {
  const q = mirror ? `?mirror=${encodeURIComponent(mirror)}` : "";
  return (
    await getJson<{ rows: { topic: string; partition: number; state: string; lag: string | null }[] }>(
      port,
      `/v1/describe${q}`,
    )
  ).rows;
}

/** Asserts the CLI failed with `code` and exactly one `Error: ...` line on stderr; returns that line. */
export function failureLine(result: RunResult): string {
  const lines = result.stderr.split("\n").filter((l) => l !== "");
  if (lines.length !== 1 || !lines[0]!.startsWith("Error: ")) {
    throw new Error(`expected one 'Error: ...' line on stderr, got ${JSON.stringify(result.stderr)}`);
  }
  return lines[0]!;
}
