import * as net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../src/kafkajs-source";
import { fakeBroker } from "./fixtures/fake-fetch-broker";

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/**
 * A broker that accepts connections and never answers (a frozen JVM, or a host that drops packets): each
 * request to it costs a whole request timeout. It counts the connections made to it.
 */
async function unansweringBroker(): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closing.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections };
}

/**
 * Kafka's clients send a Metadata request to the least loaded node (`NetworkClient.leastLoadedNode`): one
 * they are connected to, never one in its reconnect backoff after a failure. A source broker that stopped
 * answering must not cost every later metadata refresh (the leader lookups after NOT_LEADER_OR_FOLLOWER,
 * the metadata sync, topic id checks) a request timeout before another broker is asked.
 */
describe("Metadata requests while a source broker does not answer", () => {
  it("go to the broker that answered last, not to the silent one each time", async () => {
    const silent = await unansweringBroker();
    const live = await fakeBroker(
      () => ({ topics: [] }),
      [{ name: "t", errorCode: 0, partitions: 1 }],
      undefined,
      // Node 1 is the silent broker, listed first; node 2 answers.
      (port) => [
        { nodeId: 1, port: silent.port },
        { nodeId: 2, port },
      ],
    );
    const source = new KafkajsSourceCluster(
      "m",
      { "bootstrap.servers": `127.0.0.1:${live.port}` },
      { requestTimeoutMs: 200, connectionTimeoutMs: 200 },
    );
    closing.push(live.close, () => source.close());

    for (let i = 0; i < 4; i++) {
      const leaders = await source.partitionLeaders(["t"]);
      expect(leaders).toEqual([{ topic: "t", partition: 0, leaderId: 1, leaderEpoch: 0 }]);
    }
    // At most one try of the silent broker; before, each of the refreshes after the first waited on it.
    expect(silent.connections()).toBeLessThanOrEqual(1);
  });

  it("move on to another broker when the one that answered last goes away", async () => {
    const ports: number[] = [];
    const both = (): { nodeId: number; port: number }[] => ports.map((port, i) => ({ nodeId: i + 1, port }));
    const answering = () =>
      fakeBroker(() => ({ topics: [] }), [{ name: "t", errorCode: 0, partitions: 1 }], undefined, both);
    const first = await answering();
    const second = await answering();
    ports.push(first.port, second.port);
    closing.push(second.close);
    const source = new KafkajsSourceCluster(
      "m",
      { "bootstrap.servers": `127.0.0.1:${first.port}` },
      { requestTimeoutMs: 200, connectionTimeoutMs: 200 },
    );
    closing.push(() => source.close());
    expect(await source.clusterId()).toBe("fake-cluster");
    await first.close();
    expect(await source.clusterId()).toBe("fake-cluster");
    expect(await source.partitionLeaders(["t"])).toEqual([
      { topic: "t", partition: 0, leaderId: 1, leaderEpoch: 0 },
    ]);
  });
});

/**
 * Kafka's AdminClient sends DescribeConfigs of topics and DescribeAcls to the least loaded node of the
 * cluster (`LeastLoadedNodeProvider`); the bootstrap servers only find the cluster. With a single bootstrap
 * server that is down, the rest of the cluster still answers.
 */
describe("Requests any broker may answer, while the only bootstrap server is down", () => {
  it("describeTopics (Metadata, then DescribeConfigs) is answered by another broker", async () => {
    const ports: number[] = [];
    const both = (): { nodeId: number; port: number }[] => ports.map((port, i) => ({ nodeId: i + 1, port }));
    const answering = () =>
      fakeBroker(() => ({ topics: [] }), [{ name: "t", errorCode: 0, partitions: 1 }], undefined, both);
    const bootstrap = await answering();
    const other = await answering();
    ports.push(bootstrap.port, other.port);
    closing.push(other.close);
    const source = new KafkajsSourceCluster(
      "m",
      { "bootstrap.servers": `127.0.0.1:${bootstrap.port}` },
      { requestTimeoutMs: 200, connectionTimeoutMs: 200 },
    );
    closing.push(() => source.close());
    const expected = [
      {
        name: "t",
        topicId: "00000000-0000-0000-0000-000000000000",
        partitions: [{ partition: 0, leaderId: 1, leaderEpoch: 0 }],
        configs: { "retention.ms": "1000" },
      },
    ];
    expect(await source.describeTopics()).toEqual(expected);
    await bootstrap.close();
    expect(await source.describeTopics()).toEqual(expected);
  });
});
