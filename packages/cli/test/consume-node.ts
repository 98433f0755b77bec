import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { buildAdminServer } from "../src/node/http-server";
import { MirrorNode } from "../src/node/mirror-node";

/**
 * An in-memory node with topic `t` (one partition) on its destination, listening on a port, for the
 * consume tests: `token` is its admin token, `principals` the others'. What it opens goes to `open`, for the
 * test's afterEach to close.
 */
export async function nodeWithTopic(
  open: { close(): unknown }[],
  token: string,
  principals: { principal: string; token: string }[] = [],
) {
  const node = MirrorNode.start({ name: "dr", brokers: 1, sources: [] });
  open.push(node);
  const app = buildAdminServer(node, pino({ level: "silent" }), {
    adminToken: token,
    principals,
    allowedHosts: [],
  });
  open.push(app);
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const kafka = node.destination.kafka;
  await kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1, replicationFactor: 1 }] });
  const producer = kafka.producer();
  await producer.connect();
  open.push({ close: () => producer.disconnect() });
  const produce = async (...values: string[]) => {
    await producer.send({ topic: "t", messages: values.map((value) => ({ value })) });
  };
  const committed = async (group: string) => {
    const offsets = await kafka.admin().fetchOffsets({ groupId: group, topics: ["t"] });
    return offsets[0]?.partitions.map((p) => p.offset);
  };
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const consumeArgs = (...args: string[]) => [
    "consume",
    "--bootstrap-server",
    `127.0.0.1:${port}`,
    "--token",
    token,
    "--topic",
    "t",
    ...args,
  ];
  return { node, kafka, produce, committed, post, consumeArgs, port };
}
