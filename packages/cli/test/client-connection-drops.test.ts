import * as net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NodeClient } from "../src/client/node-client";
import { UsageError } from "../src/commands/cli-errors";
import { BIN, CLI_TEST_TIMEOUT_MS, failureLine, killAll, run } from "./cli-harness";

// Endpoints that accept a connection and then end it without an HTTP answer, and ports fetch refuses.

const servers: net.Server[] = [];

/** Listens on a free 127.0.0.1 port with `onSocket` handling each connection; resolves with the port. */
async function listen(onSocket: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer((socket) => {
    socket.on("error", () => {});
    onSocket(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as net.AddressInfo).port;
}

afterEach(async () => {
  killAll();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

describe("an endpoint that closes each connection as soon as it accepts it", () => {
  it(
    "kafka-mirrors exits 1 saying the connection was closed before an answer (not silently with 13)",
    async () => {
      const port = await listen((socket) => socket.destroy());
      const r = await run(BIN.kafkaMirrors, [
        "--bootstrap-server",
        `127.0.0.1:${port}`,
        "--token",
        "t",
        "--list",
      ]);
      expect(r.code).toBe(1);
      // Which of the two the client sees is a race: the close may land before undici sends the request
      // (the client saw the socket closed at connect) or after (the request was sent, then dropped).
      expect([
        `Error: 127.0.0.1:${port} accepted the connection and closed it before answering GET /v1/mirrors (the request was not sent); if it is the cluster-mirror node, it may be stopping or restarting: check it and retry; otherwise fix --bootstrap-server (the node's admin endpoint, :9094 by default)`,
        `Error: the connection to the node at 127.0.0.1:${port} was dropped before it answered GET /v1/mirrors (other side closed); the node may have stopped: check it and retry. If 127.0.0.1:${port} is not the node's admin endpoint (:9094 by default) but, say, a Kafka broker's, fix --bootstrap-server`,
      ]).toContain(failureLine(r));
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "cluster-mirror commands that ask the node say the same",
    async () => {
      const port = await listen((socket) => socket.destroy());
      const r = await run(BIN.clusterMirror, [
        "verify",
        "--bootstrap-server",
        `127.0.0.1:${port}`,
        "--token",
        "t",
        "--mirror",
        "dr",
      ]);
      expect(r.code).toBe(1);
      // The same race as above decides which of the two it says.
      expect(failureLine(r)).toMatch(
        new RegExp(
          `^Error: (127\\.0\\.0\\.1:${port} accepted the connection and closed it before answering |the connection to the node at 127\\.0\\.0\\.1:${port} was dropped before it answered )`,
        ),
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe("a connection dropped after the request was sent", () => {
  it("a read: says it was dropped and the node may have stopped, not that it is not an HTTP server", async () => {
    const port = await listen((socket) => socket.once("data", () => socket.destroy()));
    const client = new NodeClient({ host: "127.0.0.1", port }, 30_000);
    await expect(client.get("/v1/mirrors")).rejects.toThrow(
      `the connection to the node at 127.0.0.1:${port} was dropped before it answered GET /v1/mirrors (other side closed); the node may have stopped: check it and retry. If 127.0.0.1:${port} is not the node's admin endpoint (:9094 by default) but, say, a Kafka broker's, fix --bootstrap-server`,
    );
  });

  it("a reset change: says it may have been carried out, and to look before repeating it", async () => {
    const port = await listen((socket) => socket.once("data", () => socket.resetAndDestroy()));
    const client = new NodeClient({ host: "127.0.0.1", port }, 30_000);
    await expect(client.post("/v1/mirrors", { name: "m" })).rejects.toThrow(
      `the connection to the node at 127.0.0.1:${port} was dropped before it answered POST /v1/mirrors (ECONNRESET); the node may have stopped, and may have carried out the request: check it and look with --describe or --list before repeating it.`,
    );
  });
});

describe("a port fetch refuses (a WHATWG bad port)", () => {
  it("the client says no CLI can reach a node there, not to start one there", async () => {
    const client = new NodeClient({ host: "127.0.0.1", port: 6000 }, 30_000);
    const failure = client.get("/v1/mirrors");
    await expect(failure).rejects.toBeInstanceOf(UsageError);
    await expect(failure).rejects.toThrow(
      `cannot connect to 127.0.0.1:6000: port 6000 is one the CLIs' HTTP client (fetch) refuses to use (a WHATWG "bad port", reserved for other protocols), so no CLI can reach a node on it. Restart the node with another --port (e.g. the default 9094) and pass that port to --bootstrap-server.`,
    );
  });

  it(
    "kafka-mirrors --bootstrap-server :6666 is a usage error (exit 2)",
    async () => {
      const r = await run(BIN.kafkaMirrors, ["--bootstrap-server", ":6666", "--token", "t", "--list"]);
      expect(r.code).toBe(2);
      expect(failureLine(r)).toMatch(
        /^Error: cannot connect to 127\.0\.0\.1:6666: port 6666 is one the CLIs' HTTP client/,
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
