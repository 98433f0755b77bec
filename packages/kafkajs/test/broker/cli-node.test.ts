import { pino } from "pino";
import { afterAll, describe, expect, inject, it, vi } from "vitest";
// The CLI package depends on this one; its sources are imported by path so the packages do not depend on
// each other both ways.
import { kafkaMirrorsMain } from "../../../cli/src/commands/kafka-mirrors";
import { type NodeRuntime, startNodeRuntime } from "../../../cli/src/node/node-runtime";
import { KafkajsSourceCluster } from "../../src/index";
import {
  caughtUpWithBroker,
  createServedTopics,
  destinationBatches,
  hexOf,
  kafkaClient,
  storedBatches,
} from "./helpers";

/** Runs kafka-mirrors in process; returns its exit code and what it printed. */
async function kafkaMirrors(port: number, ...args: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = "";
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  try {
    const code = await kafkaMirrorsMain(["--bootstrap-server", `127.0.0.1:${port}`, ...args]);
    return { code, stdout };
  } finally {
    spy.mockRestore();
  }
}

describe("cluster-mirror node and kafka-mirrors with a real Kafka cluster as the source", () => {
  let runtime: NodeRuntime | undefined;
  afterAll(async () => {
    await runtime?.close();
  });

  it("kafka-mirrors --create --source-bootstrap <real broker>, --add, --describe: mirrored byte for byte", async () => {
    const kafka = kafkaClient("cli-test");
    const admin = kafka.admin();
    await admin.connect();
    const topic = "cli-events";
    await createServedTopics(admin, [{ topic, numPartitions: 2 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (let i = 0; i < 10; i++)
      await producer.send({
        topic,
        messages: [0, 1].map((partition) => ({ partition, value: `event ${i}` })),
      });
    await producer.disconnect();
    await admin.disconnect();

    runtime = await startNodeRuntime(
      { name: "dr", brokers: 3, sources: [], port: 0 },
      pino({ level: "silent" }),
    );
    const port = runtime.adminPort;
    const bootstrap = inject("kafkaBootstrap");
    const created = await kafkaMirrors(port, "--create", "--mirror", "m", "--source-bootstrap", bootstrap);
    expect(created).toMatchObject({ code: 0 });
    expect(created.stdout).toContain(`source cluster id ${inject("kafkaClusterId")}`);
    expect((await kafkaMirrors(port, "--add", "--topic", topic, "--mirror", "m")).code).toBe(0);
    const mirroring = runtime.node.destination.mirroring;
    await mirroring.whenCaughtUp("m", { timeoutMs: 120_000 });
    const source = new KafkajsSourceCluster("oracle", { "bootstrap.servers": bootstrap });
    await caughtUpWithBroker(runtime.node.destination.cluster, source, topic, [0, 1]).finally(() =>
      source.close(),
    );

    const described = await kafkaMirrors(port, "--describe", "--mirror", "m", "--json");
    expect(described.code).toBe(0);
    expect(described.stdout).toContain(topic);
    for (const partition of [0, 1]) {
      const stored = storedBatches(topic, partition);
      expect(stored).toHaveLength(10);
      expect(hexOf(destinationBatches(runtime.node.destination.cluster, topic, partition))).toEqual(
        hexOf(stored),
      );
    }
  });
});
