import * as net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CLI_TEST_TIMEOUT_MS, failureLine, killAll, mirrors } from "./cli-harness";

// kafka-mirrors checks a --topic regex before it asks the node: a pattern that does not compile is a usage
// error (exit 2), in the words the node uses for it, and no request is sent.

/** Stands in for the node: counts connections and hangs up on each request. */
let server: net.Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  server = net.createServer((socket) => {
    connections++;
    socket.on("error", () => {});
    socket.once("data", () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as net.AddressInfo).port;
});

afterEach(() => killAll());

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("kafka-mirrors --topic that is not a regex", () => {
  it.each([
    ["--add", "(", "Unterminated group"],
    ["--remove", "[a-", "Unterminated character class"],
    ["--promote", "*orders", "Nothing to repeat"],
    ["--failover-preview", "a)(", "Unmatched ')'"],
  ])(
    "%s --topic '%s' is a usage error naming the pattern, and nothing is sent to the node",
    async (action, pattern, why) => {
      const before = connections;
      const r = await mirrors(port, action, "--mirror", "dr", "--topic", pattern, "--token", "t");
      expect(r.code).toBe(2);
      expect(failureLine(r)).toBe(
        `Error: Invalid regular expression '${pattern}' in --topic: ${why}. Fix the pattern (one regex matching whole topic names, e.g. 'orders|payments' for two topics, '.*' for all).${pattern.startsWith("*") ? " It is a regex, not a glob: '.*' matches any name." : ""}`,
      );
      expect(connections).toBe(before);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "a pattern that compiles goes on to the node",
    async () => {
      const before = connections;
      const r = await mirrors(
        port,
        "--add",
        "--mirror",
        "dr",
        "--topic",
        "orders{1,2}|pay.*",
        "--token",
        "t",
      );
      expect(r.code).toBe(1);
      expect(failureLine(r)).toMatch(/was dropped before it answered POST \/v1\/mirrors\/dr\/topics\/add/);
      expect(connections).toBe(before + 1);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
