import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { kafkaUuidString, parsePartitionMetadata } from "@cluster-mirror/log";
import { afterEach, describe, expect, it } from "vitest";
import { testCluster } from "./helpers";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("partition.metadata", () => {
  it("prints topic ids as Kafka's Uuid.toString does (URL-safe base64, no padding)", () => {
    // Kafka's Uuid.ONE_UUID prints as AAAAAAAAAAAAAAAAAAAAAQ.
    expect(kafkaUuidString("00000000-0000-0000-0000-000000000001")).toBe("AAAAAAAAAAAAAAAAAAAAAQ");
    expect(kafkaUuidString("fb0b8b8e-93a5-4d4d-bf3e-fcfd1f3a5b7f")).toBe("-wuLjpOlTU2_Pvz9Hzpbfw");
    expect(() => kafkaUuidString("not-a-uuid")).toThrow(RangeError);
  });

  it("every replica directory names its topic id in Kafka's format, and keeps it across a restart", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "partition-metadata-"));
    dirs.push(dataDir);
    const first = testCluster({ dataDir, fsync: false, brokers: 2 });
    const topicId = first.cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [
        [0, 1],
        [1, 0],
      ],
    });
    first.settle(100);
    for (const broker of [0, 1]) {
      for (const partition of [0, 1]) {
        const file = path.join(dataDir, `broker-${broker}`, `t-${partition}`, "partition.metadata");
        const text = fs.readFileSync(file, "utf8");
        expect(text).toBe(`version: 0\ntopic_id: ${kafkaUuidString(topicId)}`);
        expect(parsePartitionMetadata(text)).toBe(topicId);
      }
    }
    first.cluster.close();
    const second = testCluster({ dataDir, fsync: false, brokers: 2 });
    second.settle(100);
    const file = path.join(dataDir, "broker-0", "t-0", "partition.metadata");
    expect(parsePartitionMetadata(fs.readFileSync(file, "utf8"))).toBe(topicId);
    second.cluster.close();
  });
});
