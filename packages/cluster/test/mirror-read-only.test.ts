import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "../src/index";
import { batch, testCluster } from "./helpers";

type Cluster = ReturnType<typeof testCluster>["cluster"];

/** Produces one record to the partition's leader: its offset, or the refusal's error name. */
async function tryProduce(cluster: Cluster, topic = "m"): Promise<bigint | string> {
  try {
    const r = await cluster
      .leaderFor(topic, 0)
      .produce({ topic, partition: 0, batch: batch(["x"]), acks: 1 });
    return r.baseOffset;
  } catch (error) {
    if (error instanceof KafkaError) return error.errorName;
    throw error;
  }
}

function mirrorTopic(cluster: Cluster, mirrorName = "dr"): void {
  cluster.controller.createTopic({
    name: "m",
    replicaAssignment: [[0, 1, 2]],
    configs: { "mirror.name": mirrorName },
  });
}

function setMirrorName(cluster: Cluster, value: string): void {
  cluster.controller.incrementalAlterConfigs({ type: "topic", name: "m" }, [
    { name: "mirror.name", op: "SET", value },
  ]);
}

/** A mirror topic `m` failed over (writable) and re-added under `dr`: read-only by its mirror.name, no START yet. */
function reAdded(): Cluster {
  const { cluster, settle } = testCluster();
  mirrorTopic(cluster);
  settle();
  cluster.broker(0)!.setReadOnly("m", 0, true);
  setMirrorName(cluster, "dr.removed");
  cluster.broker(0)!.setReadOnly("m", 0, false);
  setMirrorName(cluster, "dr");
  return cluster;
}

/** A cluster started from `cluster`'s metadata log (a whole-node restart). */
function restartedFrom(cluster: Cluster): Cluster {
  const records = cluster.controller.metadataLog().map((e) => e.record);
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const restarted = new KafkaCluster({ brokers: 3, clock, scheduler, random: new SeededRandom(7) });
  restarted.controller.replay(records);
  for (const id of [0, 1, 2]) restarted.startBroker(id);
  scheduler.run(1000);
  return restarted;
}

describe("KIP-1279 read-only flag in the metadata log (issue 11, item 1)", () => {
  it("a restarted leader still refuses produces after mirror.name got .removed, until the flag is cleared", async () => {
    const { cluster, settle } = testCluster();
    mirrorTopic(cluster);
    settle();
    cluster.broker(0)!.setReadOnly("m", 0, true);
    // Restart the leader and give it leadership back: nothing of the flag lives in its process.
    cluster.crashBroker(0);
    settle(1000);
    cluster.startBroker(0);
    settle(1000);
    cluster.controller.electPreferredLeaders();
    expect(cluster.leaderFor("m", 0).brokerId).toBe(0);
    setMirrorName(cluster, "dr.removed");
    for (const id of [0, 1, 2])
      expect(cluster.broker(id)!.replica("m", 0)!.isReadOnly("dr.removed")).toBe(true);
    expect(await tryProduce(cluster)).toBe("READ_ONLY_TOPIC");
    // The engine's STOPPED step clears it; every replica follows, a restarted one too.
    cluster.broker(1)!.setReadOnly("m", 0, false);
    expect(await tryProduce(cluster)).toBe(0n);
    cluster.crashBroker(0);
    settle(1000);
    cluster.startBroker(0);
    expect(cluster.broker(0)!.replica("m", 0)!.isReadOnly("dr.removed")).toBe(false);
  });

  it("`.removed` alone does not make a mirror topic writable", async () => {
    const { cluster, settle } = testCluster();
    mirrorTopic(cluster);
    settle();
    expect(await tryProduce(cluster)).toBe("READ_ONLY_TOPIC");
    setMirrorName(cluster, "dr.removed");
    expect(await tryProduce(cluster)).toBe("READ_ONLY_TOPIC");
  });

  it("the refusal says what to do: --remove while mirrored, wait for STOPPED once removed", async () => {
    const { cluster, settle } = testCluster();
    mirrorTopic(cluster);
    settle();
    const refusal = async () =>
      cluster
        .leaderFor("m", 0)
        .produce({ topic: "m", partition: 0, batch: batch(["x"]), acks: 1 })
        .then(
          () => "written",
          (e: Error) => e.message,
        );
    expect(await refusal()).toBe(
      "m-0 is mirrored by mirror 'dr' and read-only until it is failed over; remove it from the mirror (kafka-mirrors --remove) to make it writable",
    );
    setMirrorName(cluster, "dr.removed");
    const removed = await refusal();
    expect(removed).toBe(
      "m-0 is being failed over by mirror 'dr' and read-only until the failover ends (its ABORT markers and PID reset are written): retry once it is STOPPED (kafka-mirrors --describe --mirror dr, or whenState('dr', 'STOPPED'))",
    );
    expect(removed).not.toContain("--remove");
  });

  it("re-adding a STOPPED topic to a mirror makes it read-only in the same metadata batch", async () => {
    const { cluster, settle } = testCluster();
    mirrorTopic(cluster);
    settle();
    cluster.broker(0)!.setReadOnly("m", 0, true);
    setMirrorName(cluster, "dr.removed");
    cluster.broker(0)!.setReadOnly("m", 0, false);
    expect(await tryProduce(cluster)).toBe(0n);
    const before = cluster.controller.metadataLog().length;
    setMirrorName(cluster, "back");
    const written = cluster.controller
      .metadataLog()
      .slice(before)
      .map((e) => e.record.type);
    expect(written).toEqual(["Config", "MirrorReadOnly"]);
    expect(await tryProduce(cluster)).toBe("READ_ONLY_TOPIC");
    // Pausing and resuming do not touch the flag.
    setMirrorName(cluster, "back.paused");
    setMirrorName(cluster, "back");
    expect(cluster.controller.metadataLog().length).toBe(before + 4);
  });

  it("a re-add's flag survives the engine's STOPPED clear until its mirror.name is undone", async () => {
    const cluster = reAdded(); // read-only again, its START still to come
    // A coordinator that loads the STOPPED partition again runs STOPPED's clear: the re-add's flag stays.
    cluster.broker(0)!.setReadOnly("m", 0, false);
    expect(await tryProduce(cluster)).toBe("READ_ONLY_TOPIC");
    // Removed again before its START: the config alone changes nothing (a START may be waiting for its
    // append); the engine's clear, ordered with that START, now clears it.
    const before = cluster.controller.metadataLog().length;
    setMirrorName(cluster, "dr.removed");
    const written = cluster.controller.metadataLog().slice(before);
    expect(written.map((e) => e.record.type)).toEqual(["Config"]);
    expect(await tryProduce(cluster)).toBe("READ_ONLY_TOPIC");
    cluster.broker(0)!.setReadOnly("m", 0, false);
    expect(await tryProduce(cluster)).toBe(0n);
  });

  it("once the engine sets the flag (PREPARING), STOPPED's clear clears it and a removal alone does not", async () => {
    const cluster = reAdded();
    const before = cluster.controller.metadataLog().length;
    cluster.broker(0)!.setReadOnly("m", 0, true); // the START's PREPARING takes the flag over
    expect(cluster.controller.metadataLog().length).toBe(before + 1);
    cluster.broker(0)!.setReadOnly("m", 0, true);
    expect(cluster.controller.metadataLog().length).toBe(before + 1);
    setMirrorName(cluster, "dr.removed"); // a failover now: STOPPING first, the flag stays
    expect(await tryProduce(cluster)).toBe("READ_ONLY_TOPIC");
    cluster.broker(0)!.setReadOnly("m", 0, false); // STOPPED
    expect(await tryProduce(cluster)).toBe(0n);
  });

  it("a restart keeps whose flag it is", async () => {
    const restarted = restartedFrom(reAdded());
    restarted.broker(0)!.setReadOnly("m", 0, false);
    expect(await tryProduce(restarted)).toBe("READ_ONLY_TOPIC");
    setMirrorName(restarted, "dr.removed");
    restarted.broker(0)!.setReadOnly("m", 0, false);
    expect(await tryProduce(restarted)).toBe(0n);
  });

  it("setting the flag it already has writes no record, so it needs no controller", () => {
    const { cluster, settle } = testCluster();
    mirrorTopic(cluster);
    settle();
    cluster.broker(0)!.setReadOnly("m", 0, true);
    const before = cluster.controller.metadataLog().length;
    cluster.controller.setAvailable(false);
    cluster.broker(0)!.setReadOnly("m", 0, true);
    expect(cluster.controller.metadataLog().length).toBe(before);
    expect(() => cluster.broker(0)!.setReadOnly("m", 0, false)).toThrow(
      expect.objectContaining({ errorName: "NOT_CONTROLLER" }),
    );
  });

  it("a cluster restarted from its metadata log keeps the flag (a whole-node restart)", async () => {
    const { cluster, settle } = testCluster();
    mirrorTopic(cluster);
    settle();
    cluster.broker(0)!.setReadOnly("m", 0, true);
    setMirrorName(cluster, "dr.removed");
    expect(await tryProduce(restartedFrom(cluster))).toBe("READ_ONLY_TOPIC");
  });
});
