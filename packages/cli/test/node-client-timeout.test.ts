import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeClient } from "../src/client/node-client";
import { failureLine, mirrors } from "./cli-harness";

// A listener that accepts and never answers: a hung node, or something that is not a node at all.
let server: Server;
let port = 0;
const sockets: Socket[] = [];

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  port = typeof address === "object" && address ? address.port : 0;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe("NodeClient when nothing answers in time", () => {
  it("a read says retrying is safe and how to fix the address", async () => {
    const client = new NodeClient({ host: "127.0.0.1", port }, 200);
    await expect(client.get("/v1/mirrors")).rejects.toThrow(
      `the node at 127.0.0.1:${port} did not answer GET /v1/mirrors within 200 ms; a read changes nothing, so retrying is safe; if what listens there is not a cluster-mirror node (its admin endpoint is :9094 by default), fix --bootstrap-server`,
    );
  });

  it("a change says it may still be under way, and to look before repeating it", async () => {
    const client = new NodeClient({ host: "127.0.0.1", port }, 200);
    await expect(client.post("/v1/mirrors", { name: "m" })).rejects.toThrow(
      /did not answer POST \/v1\/mirrors within 200 ms; it may still be carrying it out: look with --describe or --list before repeating it$/,
    );
  });

  it("kafka-mirrors --timeout-ms bounds the wait of any action, and the message names the flag", async () => {
    const listed = await mirrors(port, "--list", "--timeout-ms", "300");
    expect(listed.code).toBe(1);
    expect(failureLine(listed)).toBe(
      `Error: the node at 127.0.0.1:${port} did not answer GET /v1/mirrors within 300 ms (--timeout-ms sets this wait); a read changes nothing, so retrying is safe; if what listens there is not a cluster-mirror node (its admin endpoint is :9094 by default), fix --bootstrap-server`,
    );
    const added = await mirrors(port, "--add", "--topic", "t", "--mirror", "dr", "--timeout-ms", "300");
    expect(added.code).toBe(1);
    expect(failureLine(added)).toMatch(
      /did not answer POST \/v1\/mirrors\/dr\/topics\/add within 300 ms \(--timeout-ms sets this wait\); it may still be carrying it out/,
    );
  });
});
