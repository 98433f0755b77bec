import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FETCH_BAD_PORTS } from "../src/client/node-client";
import {
  BIN,
  CLI_TEST_TIMEOUT_MS,
  failureLine,
  freePort,
  killAll,
  run,
  spawnBin,
  tempDir,
} from "./cli-harness";

afterEach(killAll);

/**
 * `cluster-mirror node --data-dir DIR ...args` (with `--metrics-port 0` unless args set it; DIR not created
 * yet): its exit code and output, and DIR. A node that starts instead of refusing its flags is stopped at
 * once (`started`), so a test of a refusal fails rather than waits for its timeout.
 */
async function node(...args: string[]) {
  const dir = path.join(tempDir("cm-node-flags"), "data");
  const metrics = args.includes("--metrics-port") ? [] : ["--metrics-port", "0"];
  const child = spawnBin(BIN.clusterMirror, ["node", "--data-dir", dir, ...metrics, ...args]);
  let stdout = "";
  let stderr = "";
  let started = false;
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
    if (!started && /"event":"node\.started"/.test(stdout)) {
      started = true;
      child.kill("SIGTERM");
    }
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  return { code, started, stdout, stderr, dir };
}

describe("demo --port on a port the CLIs' fetch refuses", () => {
  it(
    "is the same usage error, before the demo starts anything",
    async () => {
      // Without --keep-running the port is not used, but the flag is checked all the same: before, this ran
      // the whole demo (and with --keep-running served kafka-mirrors on a port it cannot reach).
      const r = await run(BIN.clusterMirror, ["demo", "--port", "6000"]);
      expect(r.code).toBe(2);
      expect(failureLine(r)).toMatch(
        /^Error: --port 6000 cannot be used: the CLIs' HTTP client \(fetch\) refuses/,
      );
      expect(r.stdout).toBe("");
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("demo --data-dir on a directory an earlier run (or anything else) left files in", () => {
  it(
    "is refused before the demo starts, and the directory is left as it was",
    async () => {
      // Before, the demo started its clusters on what an earlier demo left there and failed at its second
      // step ("orders-1 is mirrored by mirror 'dr-to-primary' and read-only"), having written to the dir.
      const dir = tempDir("cm-demo-used");
      fs.writeFileSync(path.join(dir, "meta.properties"), "cluster.id=earlier\n");
      const r = await run(BIN.clusterMirror, ["demo", "--data-dir", dir]);
      expect(r.code).toBe(1);
      expect(failureLine(r)).toBe(
        `Error: --data-dir ${dir} is not empty (it holds meta.properties): the demo starts its clusters from nothing, so nothing was started. Pass a new or empty directory, or delete this one (rm -r ${dir}) to run again.`,
      );
      expect(r.stdout).toBe("");
      expect(fs.readdirSync(dir)).toEqual(["meta.properties"]);
      expect(fs.readFileSync(path.join(dir, "meta.properties"), "utf8")).toBe("cluster.id=earlier\n");
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("node --port on a port the CLIs' fetch refuses", () => {
  it.each(["6000", "6666", "10080"])(
    "--port %s is a usage error naming why, and nothing is created",
    async (port) => {
      const r = await node("--port", port);
      expect({ started: r.started, code: r.code }).toEqual({ started: false, code: 2 });
      expect(failureLine(r)).toBe(
        `Error: --port ${port} cannot be used: the CLIs' HTTP client (fetch) refuses to connect to port ${port} (a WHATWG "bad port", reserved for other protocols), so no CLI could reach the node. Pick another port, e.g. the default 9094 (0 picks a free port).`,
      );
      expect(fs.existsSync(r.dir)).toBe(false);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it("every port of FETCH_BAD_PORTS is one fetch refuses, and its neighbours are not refused as bad", async () => {
    const why = async (port: number) => {
      try {
        await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5_000) });
        return "answered";
      } catch (error) {
        return String((error as { cause?: { message?: string } }).cause?.message);
      }
    };
    for (const port of FETCH_BAD_PORTS) expect(await why(port), `port ${port}`).toBe("bad port");
    // 6000 and 6679 are bad, 6001 and 6680 are not (connection refused, or an answer, but not "bad port").
    for (const port of [6001, 6680, 9094]) expect(await why(port), `port ${port}`).not.toBe("bad port");
  });
});

describe("node --source and --name", () => {
  it.each([
    ["a=17", "Error: --source 'a=17': BROKERS must be an integer from 1 to 16, got '17'"],
    ["a=0", "Error: --source 'a=0': BROKERS must be an integer from 1 to 16, got '0'"],
    [
      "a b=3",
      "Error: --source 'a b=3': 'a b' is not a cluster name: it contains ' '; use only ASCII letters, digits, '.', '_' and '-' (e.g. --source primary=3: an embedded source cluster 'primary' with 3 brokers, reachable as primary:9092)",
    ],
    [
      "..=3",
      "Error: --source '..=3': '..' is not a cluster name: '.' and '..' are reserved (e.g. --source primary=3: an embedded source cluster 'primary' with 3 brokers, reachable as primary:9092)",
    ],
    [
      "a=3=4",
      "Error: --source 'a=3=4' is not NAME=BROKERS: it has more than one '=' (e.g. --source primary=3: an embedded source cluster 'primary' with 3 brokers, reachable as primary:9092)",
    ],
  ])(
    "--source %s says what is wrong with it (exit 2)",
    async (value, message) => {
      const r = await node("--port", "0", "--source", value);
      expect({ started: r.started, code: r.code }).toEqual({ started: false, code: 2 });
      expect(failureLine(r)).toBe(message);
      expect(fs.existsSync(r.dir)).toBe(false);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it.each([
    [
      "bad name",
      "Error: --name 'bad name' is not a cluster name: it contains ' '; use only ASCII letters, digits, '.', '_' and '-' (e.g. --name destination; other clusters reach it as NAME:9092)",
    ],
    [
      "a/b:1",
      "Error: --name 'a/b:1' is not a cluster name: it contains '/', ':'; use only ASCII letters, digits, '.', '_' and '-' (e.g. --name destination; other clusters reach it as NAME:9092)",
    ],
    [
      "..",
      "Error: --name '..' is not a cluster name: '.' and '..' are reserved (e.g. --name destination; other clusters reach it as NAME:9092)",
    ],
  ])(
    "--name '%s' is refused as a usage error before the data dir is touched",
    async (value, message) => {
      const r = await node("--port", "0", "--name", value);
      expect({ started: r.started, code: r.code }).toEqual({ started: false, code: 2 });
      expect(failureLine(r)).toBe(message);
      expect(fs.existsSync(r.dir)).toBe(false);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "--name equal to a --source name is a usage error before the data dir is touched",
    async () => {
      const r = await node("--port", "0", "--name", "primary", "--source", "primary=1");
      expect({ started: r.started, code: r.code }).toEqual({ started: false, code: 2 });
      expect(failureLine(r)).toBe(
        "Error: cluster name 'primary' is given twice (--name and --source, or two --source); give each cluster of the node its own name",
      );
      expect(fs.existsSync(r.dir)).toBe(false);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("node on a taken port creates no data dir", () => {
  it.each(["--port", "--metrics-port"])(
    "%s taken: exit 1 and --data-dir does not exist afterwards",
    async (flag) => {
      const held = net.createServer();
      await new Promise<void>((resolve) => held.listen(0, "127.0.0.1", resolve));
      const port = String((held.address() as net.AddressInfo).port);
      try {
        const r = await node(
          ...(flag === "--port" ? ["--port", port] : ["--port", "0", "--metrics-port", port]),
        );
        expect({ started: r.started, code: r.code }).toEqual({ started: false, code: 1 });
        expect(failureLine(r)).toMatch(
          new RegExp(`^Error: ${flag} ${port}: .*\\(EADDRINUSE\\); nothing was started`),
        );
        expect(fs.existsSync(r.dir)).toBe(false);
      } finally {
        await new Promise((resolve) => held.close(resolve));
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("node --port and --metrics-port on one port", () => {
  it(
    "is a usage error before anything starts (it started the clusters, then failed on a bare EADDRINUSE)",
    async () => {
      const port = String(await freePort());
      const r = await node("--port", port, "--metrics-port", port);
      expect({ started: r.started, code: r.code }).toEqual({ started: false, code: 2 });
      expect(failureLine(r)).toBe(
        `Error: --port and --metrics-port are both ${port}: the admin endpoint and the metrics endpoint each need a port of their own. Pass another --metrics-port (default 9404; 0 picks a free port).`,
      );
      expect(r.stdout).toBe("");
      expect(fs.existsSync(r.dir)).toBe(false);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("node --state-partitions beyond one topic's creation limit", () => {
  it.each([
    [
      ["--state-partitions", "100000"],
      "Error: --state-partitions 100000 is more than the 1000 partitions __mirror_state may have; pass at most 1000 (the default is 50)",
    ],
    // Review s54: a raised --max-partitions-per-request let 1001 through, and ClusterMirroring.start (bounded
    // at 1000) refused it after the clusters had started on the data dir (exit 1).
    [
      ["--state-partitions", "1001", "--max-partitions-per-request", "2000"],
      "Error: --state-partitions 1001 is more than the 1000 partitions __mirror_state may have; pass at most 1000 (the default is 50)",
    ],
    [
      ["--state-partitions", "11", "--max-partitions-per-request", "10"],
      "Error: --state-partitions 11 is more than the 10 partitions one topic may be created with (--max-partitions-per-request); pass at most 10 (the default is 50), or raise --max-partitions-per-request",
    ],
  ])(
    "%j is a usage error before anything starts (exit 2, no data dir)",
    async (args, message) => {
      // Before, 100000 was taken: the node created __mirror_state for minutes before it listened, with no
      // log line, and filled the data dir (1.1 GB after 60 s).
      const r = await node("--port", "0", ...args);
      expect({ started: r.started, code: r.code }).toEqual({ started: false, code: 2 });
      expect(failureLine(r)).toBe(message);
      expect(fs.existsSync(r.dir)).toBe(false);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
