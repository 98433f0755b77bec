import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
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

afterEach(() => killAll());

// What a new user types wrong, each run through the real bins. None of these needs a node: every mistake
// here must be caught before the CLI talks to one (a dead port proves it: reaching it would fail with
// exit 1, "cannot reach the cluster-mirror node").

describe("a command line with no command, or an unknown one", () => {
  it(
    "cluster-mirror with no command says so and exits 2 (it printed nothing and exited 0)",
    async () => {
      const r = await run(BIN.clusterMirror, []);
      expect(r.code).toBe(2);
      expect(failureLine(r)).toMatch(
        /^Error: no command given: use one of node, create-topic, produce, consume, acls, verify, demo/,
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "cluster-mirror help nosuch names the unknown command and exits 2",
    async () => {
      const r = await run(BIN.clusterMirror, ["help", "nosuch"]);
      expect(r.code).toBe(2);
      expect(failureLine(r)).toMatch(/^Error: unknown command 'nosuch': use one of node, create-topic/);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "cluster-mirror help still prints the help and exits 0",
    async () => {
      const r = await run(BIN.clusterMirror, ["help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage: cluster-mirror");
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("kafka-mirrors with a word instead of an action flag", () => {
  it(
    "kafka-mirrors list says to use --list; any other word says flags only (exit 2)",
    async () => {
      const dead = await freePort();
      const [list, other] = await Promise.all([
        run(BIN.kafkaMirrors, ["--bootstrap-server", `:${dead}`, "list"]),
        run(BIN.kafkaMirrors, ["--bootstrap-server", `:${dead}`, "--describe", "--mirror", "my", "mirror"]),
      ]);
      expect(list.code).toBe(2);
      expect(failureLine(list)).toBe("Error: unexpected argument 'list': actions are flags, use --list");
      expect(other.code).toBe(2);
      expect(failureLine(other)).toBe(
        "Error: unexpected argument 'mirror': kafka-mirrors takes only flags (a value with spaces needs quotes)",
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("a flag given an empty value (an unset shell variable) is a usage error", () => {
  it(
    "create-topic --cluster '' is refused, not taken as the destination",
    async () => {
      const dead = await freePort();
      const r = await run(BIN.clusterMirror, [
        "create-topic",
        "--bootstrap-server",
        `:${dead}`,
        "--topic",
        "orders",
        "--cluster",
        "",
      ]);
      expect(r.code).toBe(2);
      expect(failureLine(r)).toBe("Error: --cluster is empty: give it a value (--cluster <name>)");
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "kafka-mirrors --mirror '' and --topic ' ' name the flag, not an HTTP field",
    async () => {
      const dead = await freePort();
      const results = await Promise.all([
        run(BIN.kafkaMirrors, [
          "--bootstrap-server",
          `:${dead}`,
          "--create",
          "--mirror",
          "",
          "--source-bootstrap",
          "primary:9092",
        ]),
        run(BIN.kafkaMirrors, ["--bootstrap-server", `:${dead}`, "--add", "--mirror", "m", "--topic", " "]),
      ]);
      expect(results.map((r) => r.code)).toEqual([2, 2]);
      expect(failureLine(results[0]!)).toBe("Error: --mirror is empty: give it a value (--mirror <name>)");
      expect(failureLine(results[1]!)).toBe("Error: --topic is empty: give it a value (--topic <regex>)");
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "a single-value flag given twice is refused (it took the last); repeatable flags and values after -- may repeat",
    async () => {
      const dead = await freePort();
      const [twice, joined, repeatable] = await Promise.all([
        run(BIN.kafkaMirrors, [
          "--bootstrap-server",
          `:${dead}`,
          "--describe",
          "--mirror",
          "a",
          "--mirror",
          "b",
        ]),
        run(BIN.clusterMirror, [
          "produce",
          "--bootstrap-server",
          `:${dead}`,
          "--topic",
          "a",
          "--topic=b",
          "--value",
          "x",
        ]),
        run(BIN.clusterMirror, [
          "create-topic",
          "--bootstrap-server",
          `:${dead}`,
          "--topic",
          "t",
          "--config",
          "retention.ms=1",
          "--config",
          "segment.ms=1",
        ]),
      ]);
      expect(twice.code).toBe(2);
      expect(failureLine(twice)).toBe(
        "Error: --mirror is given 2 times; it takes one value (--mirror <name>): give it once",
      );
      expect(joined.code).toBe(2);
      expect(failureLine(joined)).toBe(
        "Error: --topic is given 2 times; it takes one value (--topic <topic>): give it once",
      );
      // Both --config entries pass the flag checks: the command goes on and fails only at the dead port.
      expect(repeatable.code).toBe(1);
      expect(failureLine(repeatable)).toMatch(/^Error: cannot reach the cluster-mirror node/);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "an empty entry of a repeatable flag is refused (node --source '')",
    async () => {
      const dir = path.join(tempDir("cm-empty-source"), "data");
      const r = await run(BIN.clusterMirror, ["node", "--data-dir", dir, "--port", "0", "--source", ""]);
      expect(r.code).toBe(2);
      expect(failureLine(r)).toBe("Error: --source is empty: give it a value (--source <name[=brokers]>)");
      expect(fs.existsSync(dir)).toBe(false);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "produce --value '' is an empty message, not a mistake: it goes on to the node",
    async () => {
      const dead = await freePort();
      const r = await run(BIN.clusterMirror, [
        "produce",
        "--bootstrap-server",
        `:${dead}`,
        "--topic",
        "orders",
        "--value",
        "",
      ]);
      expect(r.code).toBe(1);
      expect(failureLine(r)).toMatch(/cannot reach the cluster-mirror node/);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("numbers and names the CLI can check itself", () => {
  it(
    "kafka-mirrors --replication-factor 1e3 or 0x2 is refused as every integer flag is",
    async () => {
      const dead = await freePort();
      const add = (rf: string) =>
        run(BIN.kafkaMirrors, [
          "--bootstrap-server",
          `:${dead}`,
          "--add",
          "--mirror",
          "m",
          "--topic",
          "orders",
          "--replication-factor",
          rf,
        ]);
      const [exp, hex] = await Promise.all([add("1e3"), add("0x2")]);
      expect(exp.code).toBe(2);
      expect(failureLine(exp)).toBe("Error: --replication-factor must be an integer >= 1, got '1e3'");
      expect(hex.code).toBe(2);
      expect(failureLine(hex)).toBe("Error: --replication-factor must be an integer >= 1, got '0x2'");
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "acls --operation WRTIE lists the operations; --allow-principal alice says Type:name (exit 2)",
    async () => {
      const dead = await freePort();
      const acls = (...args: string[]) =>
        run(BIN.clusterMirror, [
          "acls",
          "--bootstrap-server",
          `:${dead}`,
          "--add",
          "--topic",
          "orders",
          ...args,
        ]);
      const [op, principal] = await Promise.all([
        acls("--allow-principal", "User:alice", "--operation", "WRTIE"),
        acls("--allow-principal", "alice", "--operation", "write"),
      ]);
      expect(op.code).toBe(2);
      expect(failureLine(op)).toMatch(
        /^Error: --operation WRTIE is not an ACL operation; use one of ALL, READ, WRITE, .*IDEMPOTENT_WRITE$/,
      );
      expect(principal.code).toBe(2);
      expect(failureLine(principal)).toMatch(/principal 'alice' is not Type:name; use e\.g\. User:alice/);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

/**
 * Runs `kafka-mirrors --bootstrap-server :<dead port> ACTION --mirror m --mirror-config FILE`, FILE holding
 * `text`: what the CLI makes of the file before it reaches the node.
 */
async function runWithMirrorConfig(action: "--create" | "--alter", text: string) {
  const dead = await freePort();
  const file = path.join(tempDir("cm-config"), "mirror.properties");
  fs.writeFileSync(file, text);
  const r = await run(BIN.kafkaMirrors, [
    "--bootstrap-server",
    `:${dead}`,
    action,
    "--mirror",
    "m",
    "--mirror-config",
    file,
  ]);
  return { r, file };
}

describe("a --mirror-config file saved with a byte order mark", () => {
  it(
    "is read as the same properties (bootstrap.servers was taken for missing)",
    async () => {
      const { r } = await runWithMirrorConfig(
        "--create",
        "\uFEFFbootstrap.servers=primary:9092\ntopics.exclude=tmp.*\n",
      );
      // Read and accepted by the CLI: the request goes on to the node (here a dead port).
      expect(r.code).toBe(1);
      expect(failureLine(r)).toMatch(/cannot reach the cluster-mirror node/);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("a --mirror-config file with a key and no value", () => {
  it(
    "is refused naming the line (Java reads it as an empty value: an empty topics.include would stop new topics)",
    async () => {
      const { r, file } = await runWithMirrorConfig(
        "--alter",
        "# dr\nbootstrap.servers=primary:9092\ntopics.include\n",
      );
      expect(r.code).toBe(2);
      expect(failureLine(r)).toBe(
        `Error: --mirror-config ${file} has a key without a value (line 3: 'topics.include'); write KEY=VALUE, or KEY= for an empty value`,
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("a --mirror-config file whose bootstrap.servers is misspelt", () => {
  it(
    "names the misspelt key instead of only saying that bootstrap.servers is missing",
    async () => {
      const { r, file } = await runWithMirrorConfig(
        "--create",
        "boostrap.servers=primary:9092\ntopics.include=orders\n",
      );
      expect(r.code).toBe(2);
      expect(failureLine(r)).toBe(
        `Error: --mirror-config ${file} has no bootstrap.servers ('boostrap.servers' is no mirror config: did you mean 'bootstrap.servers'?); add bootstrap.servers=HOST:PORT of the source`,
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("output piped into a reader that stops reading (| head -1)", () => {
  it.each([
    ["kafka-mirrors", BIN.kafkaMirrors],
    ["cluster-mirror", BIN.clusterMirror],
  ])(
    "%s --help ends as the command does (exit 0), not with an unhandled EPIPE stack trace",
    async (_name, bin) => {
      const child = spawnBin(bin, ["--help"]);
      // The reader is gone before the program writes (it takes a while to start).
      child.stdout?.destroy();
      let stderr = "";
      child.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
      expect(stderr).toBe("");
      expect(code).toBe(0);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("a mirror named . or ..", () => {
  it(
    "is refused as reserved: in the URL they were path segments, and the node answered 'no route DELETE /v1/'",
    async () => {
      const dead = await freePort();
      const calls = [
        [BIN.kafkaMirrors, ["--bootstrap-server", `:${dead}`, "--delete", "--mirror", ".."]],
        [BIN.kafkaMirrors, ["--bootstrap-server", `:${dead}`, "--describe-config", "--mirror", "."]],
        [BIN.kafkaMirrors, ["--bootstrap-server", `:${dead}`, "--add", "--topic", "t", "--mirror", ".."]],
        [BIN.clusterMirror, ["verify", "--bootstrap-server", `:${dead}`, "--mirror", ".."]],
      ] as const;
      const results = await Promise.all(calls.map(([bin, args]) => run(bin, args)));
      for (const [i, r] of results.entries()) {
        const name = calls[i]![1].at(-1);
        expect(r.code, calls[i]![1].join(" ")).toBe(2);
        expect(failureLine(r)).toBe(
          `Error: Mirror name '${name}' is invalid: '.' and '..' are reserved (no mirror has them); kafka-mirrors --list lists the mirrors`,
        );
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("node integer flags", () => {
  it.each([
    // --brokers 30000 tried to start them all: bounded as --source's broker count is.
    ["--brokers", "30000", "Error: --brokers must be an integer from 1 to 16, got '30000'"],
    // 0 means never give up; below it means nothing.
    [
      "--failed-retry-max-attempts",
      "-1",
      "Error: --failed-retry-max-attempts must be an integer >= 0, got '-1'",
    ],
  ])(
    "%s %s is refused before the data dir is touched",
    async (flag, value, message) => {
      const dir = path.join(tempDir("cm-int-flag"), "data");
      const r = await run(BIN.clusterMirror, ["node", "--data-dir", dir, "--port", "0", flag, value]);
      expect(r.code).toBe(2);
      expect(failureLine(r)).toBe(message);
      expect(fs.existsSync(dir)).toBe(false);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("--bootstrap-server pointing at something that is not the node's admin endpoint", () => {
  /** Runs `kafka-mirrors --list` against a server started by `listen`, closed afterwards. */
  async function listAgainst(
    server: net.Server,
  ): Promise<{ port: number; code: number | null; line: string }> {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const r = await run(BIN.kafkaMirrors, ["--bootstrap-server", `:${port}`, "--token", "t", "--list"]);
      return { port, code: r.code, line: failureLine(r) };
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it(
    "an HTTP server answering 404 (the node's metrics port): says to check the admin port",
    async () => {
      const r = await listAgainst(
        http.createServer((_req, res) => {
          res.writeHead(404, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              message: "Route GET:/v1/mirrors not found",
              error: "Not Found",
              statusCode: 404,
            }),
          );
        }),
      );
      expect(r.code).toBe(1);
      expect(r.line).toBe(
        `Error: 127.0.0.1:${r.port} answered HTTP 404 to GET /v1/mirrors, but not as a cluster-mirror node; is --bootstrap-server the node's admin endpoint? (the adminPort of its node.started log line, 9094 by default; 9404 is its metrics port)`,
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "an HTTP server answering 200 {}: the same, not 'mirrors is not iterable'",
    async () => {
      const r = await listAgainst(
        http.createServer((_req, res) => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end("{}");
        }),
      );
      expect(r.code).toBe(1);
      expect(r.line).toMatch(/answered HTTP 200 to GET \/v1\/mirrors, but not as a cluster-mirror node/);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "a port that hangs up on HTTP (a Kafka broker's): says the connection dropped, and that a broker's address is not the node's",
    async () => {
      const r = await listAgainst(net.createServer((socket) => socket.once("data", () => socket.destroy())));
      expect(r.code).toBe(1);
      expect(r.line).toMatch(
        /was dropped before it answered GET \/v1\/mirrors \(.+\); the node may have stopped: check it and retry\. If 127\.0\.0\.1:\d+ is not the node's admin endpoint \(:9094 by default\) but, say, a Kafka broker's, fix --bootstrap-server$/,
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("a port in use", () => {
  it(
    "node --port on a taken port: says what to do, and starts nothing (the data dir is not created)",
    async () => {
      const held = net.createServer();
      await new Promise<void>((resolve) => held.listen(0, "127.0.0.1", resolve));
      const port = (held.address() as net.AddressInfo).port;
      const dir = path.join(tempDir("cm-port-taken"), "data");
      try {
        const r = await run(BIN.clusterMirror, [
          "node",
          "--data-dir",
          dir,
          "--port",
          String(port),
          "--metrics-port",
          "0",
        ]);
        expect(r.code).toBe(1);
        expect(failureLine(r)).toBe(
          `Error: --port ${port}: 127.0.0.1:${port} is in use by another program (another cluster-mirror node or demo?) (EADDRINUSE); nothing was started. Stop that program, or pass another --port (0 picks a free port).`,
        );
        expect(r.stdout).toBe("");
        expect(fs.existsSync(dir)).toBe(false);
      } finally {
        await new Promise((resolve) => held.close(resolve));
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "node --metrics-port on a taken port is named as --metrics-port",
    async () => {
      const held = net.createServer();
      await new Promise<void>((resolve) => held.listen(0, "127.0.0.1", resolve));
      const port = (held.address() as net.AddressInfo).port;
      const dir = path.join(tempDir("cm-metrics-taken"), "data");
      try {
        const r = await run(BIN.clusterMirror, [
          "node",
          "--data-dir",
          dir,
          "--port",
          "0",
          "--metrics-port",
          String(port),
        ]);
        expect(r.code).toBe(1);
        expect(failureLine(r)).toMatch(
          new RegExp(`^Error: --metrics-port ${port}: .* \\(EADDRINUSE\\); nothing was started`),
        );
        expect(fs.existsSync(dir)).toBe(false);
      } finally {
        await new Promise((resolve) => held.close(resolve));
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
