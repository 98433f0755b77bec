import { decodeRecords } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { validateTopicConfig } from "../src/topic-configs";
import { keyedRecord, testCluster } from "./helpers";

/**
 * Kafka 3.9 accepts `cleanup.policy=""` (ConfigDef parses a blank LIST as the empty list; ValidList checks
 * each element) and its LogConfig reads it as neither `compact` nor `delete`: no compaction, no time or
 * size retention. A source topic may hold it, and a mirror copies it.
 */
describe('cleanup.policy=""', () => {
  it("is accepted as Kafka 3.9 accepts it, at creation and by an alter; malformed lists are still refused", () => {
    const { cluster } = testCluster({ brokers: 1 });
    cluster.controller.createTopic({ name: "t", numPartitions: 1, configs: { "cleanup.policy": "" } });
    expect(cluster.controller.image.topic("t")!.configs.get("cleanup.policy")).toBe("");
    cluster.controller.createTopic({ name: "u", numPartitions: 1 });
    cluster.controller.incrementalAlterConfigs({ type: "topic", name: "u" }, [
      { name: "cleanup.policy", op: "SET", value: " " },
    ]);
    // Described as Kafka describes it: the empty list.
    expect(cluster.controller.image.topic("u")!.configs.get("cleanup.policy")).toBe("");
    // As Kafka: an empty element inside a list, or an unknown policy, is refused.
    expect(validateTopicConfig("cleanup.policy", "compact,")).toMatch(/'' is not allowed/);
    expect(validateTopicConfig("cleanup.policy", "none")).toMatch(/'none' is not allowed/);
    cluster.close();
  });

  it("neither compacts nor deletes by retention.ms or retention.bytes", async () => {
    const { cluster, clock, settle } = testCluster({ brokers: 1 });
    cluster.controller.createTopic({
      name: "t",
      numPartitions: 1,
      configs: {
        "cleanup.policy": "",
        "segment.ms": "1000",
        "retention.ms": "60000",
        "retention.bytes": "1",
      },
    });
    settle();
    const leader = cluster.leaderFor("t", 0);
    const write = async (key: string, value: string) => {
      await leader.produce({
        topic: "t",
        partition: 0,
        batch: keyedRecord(key, value, clock.now()),
        acks: 1,
      });
      settle(1_500); // each record in a segment of its own (segment.ms)
    };
    const log = leader.replica("t", 0)!.log;
    await write("a", "a1");
    await write("a", "a2");
    settle(70_000); // both past retention.ms; the log far over retention.bytes
    await write("b", "b1");
    await write("b", "b2");
    leader.runLogCleaner();
    const records = [...log.batches()].flatMap((b) =>
      decodeRecords(b).map((r) => `${r.key?.toString()}=${r.value?.toString()}`),
    );
    // Before: "" counted as the default `delete`, and retention removed everything but the active segment.
    expect(records).toEqual(["a=a1", "a=a2", "b=b1", "b=b2"]);
    expect(log.logStartOffset).toBe(0n);
    cluster.close();
  });
});
