import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { buildAdminServer } from "../src/node/http-server";
import { MirrorNode } from "../src/node/mirror-node";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** An in-memory node whose destination holds `orders-0` with five batches (offsets 0..4), behind its admin app. */
async function nodeWithFiveBatches() {
  const node = MirrorNode.start({ name: "dr", brokers: 1, sources: [] });
  open.push(node);
  const security = { adminToken: "log-route-test-token", principals: [], allowedHosts: [] };
  const app = buildAdminServer(node, pino({ level: "silent" }), security);
  open.push(app);
  const kafka = node.destination.kafka;
  await kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 1 }] });
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  for (let i = 0; i < 5; i++) await producer.send({ topic: "orders", messages: [{ value: `v${i}` }] });
  await producer.disconnect();
  return async (query: string) => {
    const res = await app.inject({
      method: "GET",
      url: `/v1/log?${query}`,
      headers: { authorization: `Bearer ${security.adminToken}` },
    });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };
}

const offsets = (body: Record<string, unknown>) =>
  (body.batches as { baseOffset: string }[]).map((b) => b.baseOffset);

// README: "The node serves the same [as describePartitionLog(cluster, topic, partition, { fromOffset,
// maxBatches })] at GET /v1/log?topic=orders&partition=0". The route ignored both and always sent the whole log.
describe("GET /v1/log", () => {
  it("serves the whole log by default, and from fromOffset at most maxBatches batches when asked", async () => {
    const log = await nodeWithFiveBatches();
    const all = await log("topic=orders&partition=0");
    expect(all.status).toBe(200);
    expect(offsets(all.body)).toEqual(["0", "1", "2", "3", "4"]);
    expect(all.body.truncated).toBe(false);
    const page = await log("topic=orders&partition=0&fromOffset=1&maxBatches=2");
    expect(page.status).toBe(200);
    expect(offsets(page.body)).toEqual(["1", "2"]);
    expect(page.body.truncated).toBe(true);
    expect(offsets((await log("topic=orders&partition=0&fromOffset=3")).body)).toEqual(["3", "4"]);
    expect(offsets((await log("topic=orders&maxBatches=0")).body)).toEqual([]);
  });

  it("refuses a bad fromOffset or maxBatches, and a field it does not know, with 400 naming it", async () => {
    const log = await nodeWithFiveBatches();
    const refused = async (query: string) => {
      const res = await log(query);
      expect(res.status, query).toBe(400);
      return (res.body.error as { name: string; message: string }).message;
    };
    expect(await refused("topic=orders&fromOffset=-1")).toBe(
      `field 'fromOffset' must be an offset >= 0 (decimal digits), got "-1"`,
    );
    expect(await refused("topic=orders&fromOffset=99999999999999999999")).toMatch(
      /field 'fromOffset' must be/,
    );
    expect(await refused("topic=orders&maxBatches=ten")).toMatch(
      /^field 'maxBatches' must be an integer >= 0/,
    );
    expect(await refused("topic=orders&maxBatch=2")).toBe(
      "unknown field 'maxBatch' (fields: cluster, topic, partition, fromOffset, maxBatches)",
    );
  });
});
