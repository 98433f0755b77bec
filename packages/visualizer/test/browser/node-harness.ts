import { KafkaError } from "@cluster-mirror/protocol";
import { pino } from "pino";
import { type NodeRuntime, startNodeRuntime } from "../../../cli/src/node/node-runtime";

/**
 * An in-memory `cluster-mirror node` (destination `dr`, embedded source `primary`) on a free port, with
 * mirror `m` mirroring primary's `orders` (`partitions` partitions) and every partition MIRRORING.
 */
export async function startMirroringNode(
  partitions: number,
): Promise<{ runtime: NodeRuntime; baseUrl: string; token: string }> {
  const runtime = await startNodeRuntime(
    { name: "dr", brokers: 1, sources: [{ name: "primary", brokers: 1 }], port: 0, numStatePartitions: 3 },
    pino({ level: "silent" }),
  );
  const { node } = runtime;
  await node
    .cluster("primary")
    .kafka.admin()
    .createTopics({ topics: [{ topic: "orders", numPartitions: partitions, replicationFactor: 1 }] });
  const admin = node.destination.mirroring.admin;
  await admin.createMirror("m", { "bootstrap.servers": "primary:9092" });
  // The coordinators of __mirror_state load right after start; until then an add is refused as retriable.
  for (;;) {
    try {
      await admin.addTopics("m", "orders");
      break;
    } catch (error) {
      if (!(error instanceof KafkaError && error.retriable)) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await node.destination.mirroring.whenState("m", "MIRRORING", { timeoutMs: 30_000 });
  return { runtime, baseUrl: `http://127.0.0.1:${runtime.adminPort}`, token: runtime.adminToken };
}
