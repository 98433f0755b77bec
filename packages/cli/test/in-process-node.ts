import type { MirrorAdmin } from "@cluster-mirror/mirror";
import { KafkaError } from "@cluster-mirror/protocol";
import { MirrorNode } from "../src/node/mirror-node";

/**
 * `addTopics` on an in-process node that just started: the coordinators of `__mirror_state` load right
 * after start, and until then an add is refused as retriable, so it is asked again every 50 ms.
 */
export async function addTopicsWhenReady(admin: MirrorAdmin, mirror: string, regex: string): Promise<void> {
  for (;;) {
    try {
      await admin.addTopics(mirror, regex);
      return;
    } catch (error) {
      if (!(error instanceof KafkaError && error.retriable)) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * An in-memory node (destination dr with `brokers` brokers, source primary with one) with mirror m on
 * primary's `orders` (`partitions` partitions), MIRRORING; `open` gets the node, to close after the test.
 */
export async function mirroringNode(
  open: { close(): unknown }[],
  { brokers = 1, numStatePartitions = 2, partitions = 2 } = {},
): Promise<MirrorNode> {
  const node = MirrorNode.start({
    name: "dr",
    brokers,
    sources: [{ name: "primary", brokers: 1 }],
    numStatePartitions,
  });
  open.push(node);
  await node
    .cluster("primary")
    .kafka.admin()
    .createTopics({ topics: [{ topic: "orders", numPartitions: partitions, replicationFactor: 1 }] });
  const admin = node.destination.mirroring.admin;
  await admin.createMirror("m", { "bootstrap.servers": "primary:9092" });
  await addTopicsWhenReady(admin, "m", "orders");
  await node.destination.mirroring.whenState("m", "MIRRORING");
  return node;
}
