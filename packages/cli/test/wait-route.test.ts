import type { AddressInfo } from "node:net";
import { type Logger, pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { NodeClient } from "../src/client/node-client";
import { buildAdminServer } from "../src/node/http-server";
import { MirrorNode } from "../src/node/mirror-node";
import { addTopicsWhenReady } from "./in-process-node";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** An in-memory node (destination dr, source primary) mirroring primary's `orders`, behind its admin app. */
async function mirroringNode(logger: Logger = pino({ level: "silent" })) {
  const node = MirrorNode.start({ name: "dr", brokers: 1, sources: [{ name: "primary", brokers: 1 }] });
  open.push(node);
  const security = { adminToken: "wait-route-test-token", principals: [], allowedHosts: [] };
  const app = buildAdminServer(node, logger, security);
  open.push(app);
  await node
    .cluster("primary")
    .kafka.admin()
    .createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 1 }] });
  await node.destination.mirroring.admin.createMirror("m", { "bootstrap.servers": "primary:9092" });
  await addTopicsWhenReady(node.destination.mirroring.admin, "m", "orders");
  const wait = async (query: string) => {
    const res = await app.inject({
      method: "GET",
      url: `/v1/wait?${query}`,
      headers: { authorization: `Bearer ${security.adminToken}` },
    });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };
  return { wait, app, token: security.adminToken };
}

describe("GET /v1/wait", () => {
  it("answers once the mirror is caught up, and says why not when the poll period passes first", async () => {
    const { wait } = await mirroringNode();
    expect(await wait("mirror=m&caughtUp=true")).toEqual({ status: 200, body: { reached: true } });
    expect(await wait("mirror=m&state=MIRRORING&topic=orders")).toEqual({
      status: 200,
      body: { reached: true },
    });
    // Nothing removes the topic, so it never becomes STOPPED: the long poll ends with the reason.
    const notYet = await wait("mirror=m&state=STOPPED&timeoutMs=100");
    expect(notYet.status).toBe(200);
    expect(notYet.body).toEqual({
      reached: false,
      reason: expect.stringMatching(/1 of 1 partitions of mirror m not STOPPED \(orders-0 MIRRORING\)/),
    });
  });

  it("refuses a request without exactly one condition, and an unknown mirror, as errors", async () => {
    const { wait } = await mirroringNode();
    for (const query of ["mirror=m", "mirror=m&state=STOPPED&caughtUp=true"]) {
      const res = await wait(query);
      expect(res.status, query).toBe(400);
      expect(res.body).toEqual({
        error: expect.objectContaining({
          name: "INVALID_REQUEST",
          message: "give exactly one of 'state' or 'caughtUp=true'",
        }),
      });
    }
    expect((await wait("state=STOPPED")).status).toBe(400);
    const unknown = await wait("mirror=nope&state=STOPPED");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: expect.objectContaining({ name: "UNKNOWN_MIRROR" }) });
  });

  it("a client that leaves before the answer: the node logs it, then the outcome once the request ends", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const { app, token } = await mirroringNode(logger);
    await app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = app.server.address() as AddressInfo;
    const answered = new NodeClient({ host: "127.0.0.1", port }, 10_000, token);
    await answered.get("/v1/wait", { mirror: "m", state: "MIRRORING" });
    expect(lines.filter((l) => l.event !== undefined)).toEqual([]);
    // The client waits 100 ms; the node holds the long poll for 600 ms, then answers a closed connection.
    const impatient = new NodeClient({ host: "127.0.0.1", port }, 100, token);
    await expect(
      impatient.get("/v1/wait", { mirror: "m", state: "STOPPED", timeoutMs: "600" }),
    ).rejects.toThrow(/did not answer GET \/v1\/wait within 100 ms/);
    // A hang guard only: the outcome is logged about 500 ms later.
    for (let i = 0; i < 500 && !lines.some((l) => l.event === "request.completed_after_abort"); i++)
      await new Promise((r) => setTimeout(r, 20));
    const events = lines.filter((l) => l.event !== undefined);
    expect(events.map((l) => l.event)).toEqual(["request.aborted", "request.completed_after_abort"]);
    expect(events[0]!.reqId).toBe(events[1]!.reqId);
    expect(events[1]).toMatchObject({ res: { statusCode: 200 } });
    expect(events[1]!.responseTime).toEqual(expect.any(Number));
  });
});
