import { describe, expect, it } from "vitest";
import { KafkaCluster, ManualClock, ManualScheduler, MemoryDataDir, SeededRandom } from "../src/index";
import { batch, batchesOf } from "./helpers";

describe("KafkaClusterOptions.memoryDataDirs: the brokers' disks kept by the caller", () => {
  it("a new cluster on a killed one's disks and metadata log finds its logs (a node restarted on its machine)", async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const scheduler = new ManualScheduler(clock);
    const disks = [new MemoryDataDir(), new MemoryDataDir(), new MemoryDataDir()];
    const options = { brokers: 3, clock, scheduler, memoryDataDirs: disks };
    const first = KafkaCluster.start({ ...options, random: new SeededRandom(1) });
    first.controller.createTopic({ name: "t", numPartitions: 1, replicationFactor: 3 });
    scheduler.run();
    const leader = first.controller.image.partition("t", 0)!.leader;
    const written = first
      .broker(leader)!
      .produce({ topic: "t", partition: 0, batch: batch(["x", "y"]), acks: 1 });
    scheduler.run(1_000);
    await written;
    const records = first.controller.metadataLog().map((e) => e.record);
    for (const id of first.runningBrokers()) first.crashBroker(id);
    first.close();
    expect(disks.map((d) => d.listLogs())).toEqual([["t-0"], ["t-0"], ["t-0"]]);

    const second = new KafkaCluster({ ...options, random: new SeededRandom(2), clusterId: first.clusterId });
    second.controller.replay(records);
    for (let id = 0; id < 3; id++) second.startBroker(id);
    scheduler.run(1_000);
    for (let id = 0; id < 3; id++) expect(batchesOf(second, id, "t").map((b) => b.recordCount)).toEqual([2]);
    second.close();
  });

  it("is refused with a dataDir: a broker has one disk", () => {
    const clock = new ManualClock(0);
    expect(
      () =>
        new KafkaCluster({
          clock,
          scheduler: new ManualScheduler(clock),
          random: new SeededRandom(1),
          dataDir: "/nonexistent-cluster-mirror-test",
          memoryDataDirs: [new MemoryDataDir()],
        }),
    ).toThrow(expect.objectContaining({ errorName: "INVALID_REQUEST" }));
  });
});
