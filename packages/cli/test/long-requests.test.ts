import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { buildAdminServer } from "../src/node/http-server";
import { MirrorNode } from "../src/node/mirror-node";
import { addTopicsWhenReady } from "./in-process-node";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

const TOKEN = "long-requests-test-token";

/** An in-memory node (destination dr, source primary) mirroring primary's `orders`, listening on a port. */
async function mirroringNode() {
  const node = MirrorNode.start({ name: "dr", brokers: 1, sources: [{ name: "primary", brokers: 1 }] });
  open.push(node);
  const app = buildAdminServer(node, pino({ level: "silent" }), {
    adminToken: TOKEN,
    principals: [],
    allowedHosts: [],
  });
  open.push(app);
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const primary = node.cluster("primary");
  await primary.kafka
    .admin()
    .createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 1 }] });
  const admin = node.destination.mirroring.admin;
  await admin.createMirror("m", { "bootstrap.servers": "primary:9092" });
  await addTopicsWhenReady(admin, "m", "orders");
  await node.destination.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
  const post = (path: string, body: unknown, signal?: AbortSignal) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  const produce = async (count: number) => {
    const producer = primary.kafka.producer();
    await producer.connect();
    await producer.send({
      topic: "orders",
      messages: Array.from({ length: count }, (_, i) => ({ value: `v${i}` })),
    });
    await producer.disconnect();
  };
  return { node, admin, post, produce, destination: node.destination };
}

describe("long requests of the node", () => {
  it("a promote whose client went away (Ctrl-C) while it caught up fails nothing over, then or later", async () => {
    const { node, admin, post, produce } = await mirroringNode();
    await admin.pauseTopics("m", "orders");
    await node.destination.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    await produce(3); // the copy cannot catch up while paused
    const client = new AbortController();
    const answer = post("/v1/mirrors/m/promote", { topic: "orders", timeoutMs: 60_000 }, client.signal).catch(
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 200));
    client.abort();
    expect(await answer).toBeInstanceOf(Error);
    // Before: the promote went on in the node and failed the topic over once the resume let it catch up.
    await admin.resumeTopics("m", "orders");
    await node.destination.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 300));
    expect((await admin.describe("m")).map((r) => r.state)).toEqual(["MIRRORING"]);
  }, 60_000);

  it("a node that begins to stop ends a long consume at once (503), committing nothing for its group", async () => {
    const { node, post, destination } = await mirroringNode();
    await destination.kafka
      .admin()
      .createTopics({ topics: [{ topic: "local", numPartitions: 1, replicationFactor: 1 }] });
    const producer = destination.kafka.producer();
    await producer.connect();
    await producer.send({ topic: "local", messages: [{ value: "one" }] });
    await producer.disconnect();
    // Ten minutes of polling for 5 messages: only the stop can end it within this test's time.
    const consume = post("/v1/consume", {
      topic: "local",
      group: "g",
      fromBeginning: true,
      maxMessages: 5,
      timeoutMs: 600_000,
    });
    await new Promise((r) => setTimeout(r, 300));
    node.stopRequests();
    const res = await consume;
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(
      /consume was cut short .* after 1 message\(s\); no offsets were committed for group g/,
    );
    const committed = await destination.kafka.admin().fetchOffsets({ groupId: "g", topics: ["local"] });
    expect(committed[0]?.partitions.map((p) => p.offset)).toEqual(["-1"]);
  }, 60_000);

  it("a node that begins to stop ends a long wait at once (503), saying so", async () => {
    const { node } = await mirroringNode();
    const app = buildAdminServer(node, pino({ level: "silent" }), {
      adminToken: TOKEN,
      principals: [],
      allowedHosts: [],
    });
    open.push(app);
    const wait = app.inject({
      method: "GET",
      url: "/v1/wait?mirror=m&state=STOPPED&timeoutMs=120000",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    await new Promise((r) => setTimeout(r, 200));
    node.stopRequests();
    const res = await wait;
    expect(res.statusCode).toBe(503);
    expect(res.json().error.message).toMatch(/^the node is stopping: the wait was cut short/);
  }, 60_000);
});
