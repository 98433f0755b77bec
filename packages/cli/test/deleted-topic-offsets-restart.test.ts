import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { startPersistentCluster } from "../src/persistence/persistent-cluster";
import { tempDir } from "./cli-harness";
import { persistentOptions } from "./persistent-options";

describe("persistent cluster: a deleted topic's committed offsets across a restart", () => {
  it("are gone after the restart even when the process died between the deletion and the offsets file write", () => {
    const dir = tempDir("cm-deleted-offsets");
    const options = () => persistentOptions(dir);
    const offsetsFile = path.join(dir, "group-offsets.json");
    const first = startPersistentCluster(options());
    first.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
    first.cluster.groups.commitOffsets({
      groupId: "g",
      offsets: [{ topic: "t", partition: 0, offset: 7n, leaderEpoch: 0 }],
    });
    const before = fs.readFileSync(offsetsFile, "utf8");
    first.cluster.controller.deleteTopic("t");
    first.close();
    // The RemoveTopic record is journaled (fsynced) before it takes effect; the offsets file is written
    // after, by a listener: a crash in between leaves the old file.
    fs.writeFileSync(offsetsFile, before);

    const second = startPersistentCluster(options());
    expect(second.cluster.controller.image.topic("t")).toBeUndefined();
    expect(second.cluster.groups.fetchOffsets("g").has("t:0")).toBe(false);
    // A topic created again under the name must not hand the group the old topic's position.
    second.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
    expect(second.cluster.groups.fetchOffsets("g").has("t:0")).toBe(false);
    second.close();

    // And the file no longer holds them either.
    const third = startPersistentCluster(options());
    expect(third.cluster.groups.fetchOffsets("g").has("t:0")).toBe(false);
    third.close();
  });

  it("of a topic deleted and created again before the restart, the new topic's offsets are kept", () => {
    const dir = tempDir("cm-recreated-offsets");
    const options = () => persistentOptions(dir);
    const first = startPersistentCluster(options());
    first.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
    first.cluster.groups.commitOffsets({ groupId: "g", offsets: [{ topic: "t", partition: 0, offset: 7n }] });
    first.cluster.controller.deleteTopic("t");
    first.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
    first.cluster.groups.commitOffsets({ groupId: "g", offsets: [{ topic: "t", partition: 0, offset: 2n }] });
    first.close();

    const second = startPersistentCluster(options());
    expect(second.cluster.groups.fetchOffsets("g").get("t:0")?.offset).toBe(2n);
    second.close();
  });
});
