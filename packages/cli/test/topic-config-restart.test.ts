import type { KafkaCluster } from "@cluster-mirror/cluster";
import { decodeRecords } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "./cli-harness";
import { closePersistentNodes, leaderLog, startPersistentNode } from "./persistent-node";

const start = startPersistentNode;
afterEach(closePersistentNodes);
const log = leaderLog;

/** The values the log holds, oldest first. */
const values = (cluster: KafkaCluster, topic: string) =>
  [...log(cluster, topic).batches()]
    .filter((b) => !b.isControl)
    .flatMap((b) => decodeRecords(b).map((r) => r.value?.toString() ?? null));

/** Three segments of key `k` (v1, v2, v3), each rolled by segment.ms (1 s) of virtual time. */
async function writeSegments(node: ReturnType<typeof start>, topic: string) {
  const producer = node.kafka.producer({ idempotent: true });
  await node.run(producer.connect());
  for (const v of ["v1", "v2", "v3"]) {
    await node.run(producer.send({ topic, messages: [{ key: "k", value: v }] }));
    node.options.clock.advance(2_000);
  }
  await node.run(producer.disconnect());
}

describe("topic configs changed at run time, before and after a restart", () => {
  it("cleanup.policy changed to compact is in force at once, and after a restart", async () => {
    const dir = tempDir("cm-config-compact");
    const first = start(dir);
    first.cluster.controller.createTopic({ name: "t", numPartitions: 1, configs: { "segment.ms": "1000" } });
    await writeSegments(first, "t");
    first.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { op: "SET", name: "cleanup.policy", value: "compact" },
    ]);
    // Kafka's cleaner compacts the log as soon as its policy is compact (v1 is superseded by v2; v3 is in
    // the active segment). The log kept the configs it was opened with, so the cleaner did nothing.
    first.cluster.localBroker(0)!.runLogCleaner();
    expect(values(first.cluster, "t")).toEqual(["v2", "v3"]);
    first.pc.close();

    // A restart opens the log during the metadata replay, at its Partition record: with the creation's
    // configs again, so the change was not in force after a restart either.
    const second = start(dir);
    expect(second.cluster.controller.image.topic("t")?.configs.get("cleanup.policy")).toBe("compact");
    const producer = second.kafka.producer({ idempotent: true });
    await second.run(producer.connect());
    second.options.clock.advance(2_000);
    await second.run(producer.send({ topic: "t", messages: [{ key: "k", value: "v4" }] }));
    second.options.clock.advance(2_000);
    await second.run(producer.send({ topic: "t", messages: [{ key: "k", value: "v5" }] }));
    second.cluster.localBroker(0)!.runLogCleaner();
    expect(values(second.cluster, "t")).toEqual(["v4", "v5"]);
  });

  it("cleanup.policy changed to delete (with retention.ms) is in force at once, and after a restart", async () => {
    const dir = tempDir("cm-config-delete");
    const first = start(dir);
    first.cluster.controller.createTopic({
      name: "t",
      numPartitions: 1,
      configs: { "segment.ms": "1000", "cleanup.policy": "compact" },
    });
    await writeSegments(first, "t");
    first.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { op: "SET", name: "cleanup.policy", value: "delete" },
      { op: "SET", name: "retention.ms", value: "3000" },
    ]);
    // v1 and v2 are older than retention.ms: their (rolled) segments go; v3's is the active one.
    first.cluster.localBroker(0)!.runLogCleaner();
    expect(values(first.cluster, "t")).toEqual(["v3"]);
    expect(log(first.cluster, "t").logStartOffset).toBe(2n);
    first.pc.close();

    const second = start(dir);
    const producer = second.kafka.producer({ idempotent: true });
    await second.run(producer.connect());
    second.options.clock.advance(10_000);
    await second.run(producer.send({ topic: "t", messages: [{ key: "k", value: "v4" }] }));
    second.options.clock.advance(10_000);
    second.cluster.localBroker(0)!.runLogCleaner();
    expect(values(second.cluster, "t")).toEqual(["v4"]);
  });
});

describe("segment.ms across a restart", () => {
  it("the active segment's age counts from its first record, not from the restart: retention.ms still deletes", async () => {
    const dir = tempDir("cm-segment-ms");
    const first = start(dir);
    first.cluster.controller.createTopic({
      name: "t",
      numPartitions: 1,
      configs: { "segment.ms": "10000", "retention.ms": "10000" },
    });
    const p1 = first.kafka.producer({ idempotent: true });
    await first.run(p1.connect());
    await first.run(p1.send({ topic: "t", messages: [{ key: "k", value: "old" }] }));
    first.pc.close();

    // 15 s later (past segment.ms): Kafka rolls the segment at this append (its first batch is 15 s old), so
    // `old` is in a closed segment that retention deletes once it is older than retention.ms. The restart
    // reset the segment's age to 0: no roll, and `old` stays readable for as long as the node restarts
    // more often than segment.ms (the active segment is never deleted).
    const second = start(dir, (o) => {
      o.clock.advance(15_000);
      return o;
    });
    const p2 = second.kafka.producer({ idempotent: true });
    await second.run(p2.connect());
    await second.run(p2.send({ topic: "t", messages: [{ key: "k", value: "new" }] }));
    second.options.clock.advance(5_000);
    second.cluster.localBroker(0)!.runLogCleaner();
    expect(values(second.cluster, "t")).toEqual(["new"]);
  });
});
