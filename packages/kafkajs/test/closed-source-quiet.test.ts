import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { KafkajsSourceCluster, KafkajsSourceConnector } from "../src/index";

/** A TCP listener that accepts connections and never answers (a port that is not a Kafka broker). */
function silentListener(): Promise<{ server: Server; sockets: Socket[]; port: number }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => {});
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve({ server, sockets, port: typeof address === "object" && address ? address.port : 0 });
    }),
  );
}

const open: Server[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A source named `mirror` whose bootstrap server is a silent listener; its warnings are collected. */
async function sourceOnSilentListener(mirror: string, requestTimeoutMs: number) {
  const { server, sockets, port } = await silentListener();
  open.push(server);
  const warnings: string[] = [];
  const source = new KafkajsSourceCluster(
    mirror,
    { "bootstrap.servers": `127.0.0.1:${port}` },
    { requestTimeoutMs, connectionTimeoutMs: 300, warn: (line) => warnings.push(line) },
  );
  return { source, sockets, warnings };
}

describe("a closed kafkajs source", () => {
  it("logs nothing when the peer resets a connection it had closed (a mirror whose create failed)", async () => {
    const { source, sockets, warnings } = await sourceOnSilentListener("hang1", 300);
    await expect(source.clusterId()).rejects.toThrow(/timed out/);
    expect(sockets.length).toBeGreaterThan(0);
    await source.close();
    const before = warnings.length;
    // The peer goes away hard: each connection gets a reset.
    for (const socket of sockets) socket.resetAndDestroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(warnings.slice(before)).toEqual([]);
  });

  it("an open one still reports a reset", async () => {
    const { source, sockets, warnings } = await sourceOnSilentListener("hang2", 2_000);
    const asked = source.clusterId().catch((error: unknown) => error);
    while (sockets.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    for (const socket of sockets) socket.resetAndDestroy();
    await asked;
    expect(warnings.some((w) => w.startsWith("mirror hang2: kafkajs") && /ECONNRESET/.test(w))).toBe(true);
    await source.close();
  });
});

describe("a quiet connection (an alter trying a new config)", () => {
  it("logs nothing: what goes wrong is the alter's error; the mirror's own connection still reports", async () => {
    const { server, sockets, port } = await silentListener();
    open.push(server);
    const warnings: string[] = [];
    const connector = new KafkajsSourceConnector({
      requestTimeoutMs: 2_000,
      connectionTimeoutMs: 300,
      warn: (line) => warnings.push(line),
    });
    const configs = { "bootstrap.servers": `127.0.0.1:${port}` };
    const resetWhileAsking = async (mirror: string, quiet: boolean) => {
      const source = connector.connect(mirror, configs, { quiet });
      const asked = source.clusterId().catch((error: unknown) => error);
      while (sockets.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      for (const socket of sockets.splice(0)) socket.resetAndDestroy();
      expect(await asked).toBeInstanceOf(Error);
    };
    await resetWhileAsking("probe", true);
    expect(warnings).toEqual([]);
    await resetWhileAsking("running", false);
    expect(warnings.some((w) => w.startsWith("mirror running:") && /ECONNRESET/.test(w))).toBe(true);
    await connector.close();
  });
});
