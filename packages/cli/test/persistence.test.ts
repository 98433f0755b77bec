import * as fs from "node:fs";
import * as path from "node:path";
import { ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { prepareDataDir } from "../src/persistence/data-dir";
import { encodeMetadataEntry, readMetadataLog } from "../src/persistence/metadata-log-file";
import { startPersistentCluster } from "../src/persistence/persistent-cluster";
import { tempDir } from "./cli-harness";
import { persistentOptions } from "./persistent-options";

describe("persistent cluster", () => {
  it("metadata log lines keep bigints and drop a torn tail", () => {
    const file = path.join(tempDir("cm-meta"), "metadata.log");
    const entry = {
      offset: 0,
      record: { type: "ProducerIds" as const, nextProducerId: 12345678901234567890n },
    };
    const truncation = {
      offset: 1,
      record: {
        type: "ReplicaTruncation" as const,
        topicId: "AAAAAAAAAAAAAAAAAAAAAA",
        partition: 3,
        replicas: [1, 2],
        truncationOffset: 9007199254740993n,
        full: false,
      },
    };
    const lines = `${encodeMetadataEntry(entry)}\n${encodeMetadataEntry(truncation)}\n`;
    fs.writeFileSync(file, `${lines}{"offset":2,"rec`);
    expect(readMetadataLog(file)).toEqual([entry.record, truncation.record]);
    expect(fs.readFileSync(file, "utf8")).toBe(lines);
  });

  it("only the node's user can read what holds source credentials: a new data dir 0700, metadata.log 0600", () => {
    const dir = path.join(tempDir("cm-modes"), "data");
    const previous = process.umask(0o022);
    try {
      prepareDataDir("--data-dir", dir);
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
      // A file an older version left readable to others is locked too.
      const file = path.join(dir, "metadata.log");
      fs.writeFileSync(file, "", { mode: 0o644 });
      const clock = new ManualClock(1_700_000_000_000);
      const started = startPersistentCluster({
        dataDir: dir,
        brokers: 1,
        clock,
        scheduler: new ManualScheduler(clock),
        random: new SeededRandom(3),
        fsync: false,
      });
      started.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
      started.close();
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(file, "utf8")).toContain('"t"');
    } finally {
      process.umask(previous);
    }
  });

  it("recovers cluster id, topics, configs, producer-id blocks and group offsets after a restart", async () => {
    const dir = tempDir("cm-pc");
    const options = () => {
      const clock = new ManualClock(1_700_000_000_000);
      return {
        dataDir: dir,
        brokers: 3,
        clock,
        scheduler: new ManualScheduler(clock),
        random: new SeededRandom(3),
        fsync: false,
      };
    };
    const first = startPersistentCluster(options());
    const id = first.cluster.clusterId;
    first.cluster.controller.createTopic({
      name: "t",
      numPartitions: 2,
      configs: { "retention.ms": "1000" },
    });
    const pid = first.cluster.controller.allocateProducerIds(1000);
    first.cluster.groups.commitOffsets({
      groupId: "g",
      offsets: [{ topic: "t", partition: 1, offset: 7n, leaderEpoch: 0 }],
    });
    first.close();

    const second = startPersistentCluster(options());
    expect(second.recoveredRecords).toBeGreaterThan(0);
    expect(second.cluster.clusterId).toBe(id);
    expect(second.cluster.controller.image.topic("t")?.configs.get("retention.ms")).toBe("1000");
    expect(second.cluster.controller.allocateProducerIds(1)).toBe(pid + 1000n);
    expect(second.cluster.groups.fetchOffsets("g").get("t:1")?.offset).toBe(7n);
    expect(second.cluster.runningBrokers()).toEqual([0, 1, 2]);
    second.close();
  });

  it("recovers ACL bindings and which mirror owns them after a restart (issue 15)", () => {
    const dir = tempDir("cm-acls");
    const options = () => persistentOptions(dir);
    const binding = {
      resourceType: "TOPIC" as const,
      resourceName: "orders-",
      patternType: "PREFIXED" as const,
      principal: "User:alice",
      host: "*",
      operation: "WRITE" as const,
      permissionType: "ALLOW" as const,
    };
    const local = { ...binding, principal: "User:bob" };
    const removed = { ...binding, principal: "User:eve" };
    const first = startPersistentCluster(options());
    first.cluster.authorizer.createAcls([binding], { owner: "m1" });
    first.cluster.authorizer.createAcls([local, removed]);
    first.cluster.authorizer.deleteAcls([removed]);
    first.close();
    const second = startPersistentCluster(options());
    expect(second.cluster.authorizer.describeAcls()).toEqual([binding, local]);
    expect(second.cluster.authorizer.ownerOf(binding)).toBe("m1");
    expect(second.cluster.authorizer.ownerOf(local)).toBeUndefined();
    second.close();
  });
});
