import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { MirrorNode } from "../src/node/mirror-node";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** A loopback port nothing listens on (one a listener just gave back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

/** Waits (a hang guard only) until `done`, or a second passed. */
async function settle(done: () => boolean): Promise<void> {
  for (let i = 0; i < 50 && !done(); i++) await new Promise((r) => setTimeout(r, 20));
}

describe("warnings of a real Kafka source on the node", () => {
  it("a --create that cannot reach its source logs nothing: the create's error says it", async () => {
    const lines: string[] = [];
    const node = MirrorNode.start({ name: "dr", brokers: 1, sources: [], warn: (_c, m) => lines.push(m) });
    open.push(node);
    const port = await closedPort();
    await expect(
      node.destination.mirroring.admin.createMirror("g", { "bootstrap.servers": `127.0.0.1:${port}` }),
    ).rejects.toThrow(/ECONNREFUSED/);
    await settle(() => false);
    expect(lines).toEqual([]);
    expect(node.destination.mirroring.admin.listMirrors()).toEqual([]);
  });

  it("a mirror that exists still reports its source's connection errors", async () => {
    const lines: string[] = [];
    const node = MirrorNode.start({ name: "dr", brokers: 1, sources: [], warn: (_c, m) => lines.push(m) });
    open.push(node);
    const port = await closedPort();
    // As a node restarted on a data dir with this mirror finds it: defined, its source down.
    node.destination.cluster.controller.putMirror("g", { "bootstrap.servers": `127.0.0.1:${port}` });
    await node.destination.mirroring.refreshNow("g").catch(() => {});
    await settle(() => lines.some((l) => l.includes("ECONNREFUSED")));
    expect(lines.some((l) => l.startsWith("mirror g: kafkajs") && l.includes("ECONNREFUSED"))).toBe(true);
  });
});
