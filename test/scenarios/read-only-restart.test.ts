import type { KafkaCluster } from "@cluster-mirror/cluster";
import { encodeRecordBatch, KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { topology } from "./helpers";

/** One record, produced straight to the partition's leader (acks=1, no producer id). */
async function produceToLeader(cluster: KafkaCluster, topic: string, partition: number) {
  const batch = encodeRecordBatch({
    baseTimestamp: BigInt(cluster.clock.now()),
    records: [
      {
        attributes: 0,
        offsetDelta: 0,
        timestampDelta: 0n,
        key: null,
        value: Buffer.from("local"),
        headers: [],
      },
    ],
  });
  try {
    const r = await cluster.leaderFor(topic, partition).produce({ topic, partition, batch, acks: 1 });
    return { accepted: r.baseOffset } as const;
  } catch (error) {
    if (error instanceof KafkaError) return { refused: error.errorName } as const;
    throw error;
  }
}

describe("read-only survives a broker restart (issue 11, item 1)", () => {
  it("a restarted leader refuses produces with READ_ONLY_TOPIC until the partition is STOPPED", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    await t.run(
      a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
    );
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    await t.run(producer.send({ topic: "orders", messages: [{ key: "k", value: "from a" }], acks: -1 }));
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    const state = async () => (await b.mirroring.admin.describe("dr"))[0]?.state;
    await t.until(async () => {
      const rows = await b.mirroring.admin.describe("dr");
      return rows[0]?.state === "MIRRORING" && rows[0].lag === 0n;
    }, "dr caught up");

    // Restart the partition's leader while MIRRORING, let it catch up, then move leadership back to it.
    const leader = b.cluster.leaderFor("orders", 0).brokerId;
    expect(b.cluster.controller.image.partition("orders", 0)?.replicas[0]).toBe(leader);
    b.cluster.crashBroker(leader);
    await t.advance(1000);
    expect(b.cluster.leaderFor("orders", 0).brokerId).not.toBe(leader);
    b.cluster.startBroker(leader);
    await t.until(
      () => b.cluster.controller.image.partition("orders", 0)?.isr.includes(leader) ?? false,
      "the restarted broker back in the ISR",
    );
    b.cluster.controller.electPreferredLeaders();
    expect(b.cluster.leaderFor("orders", 0).brokerId).toBe(leader);
    expect(await state()).toBe("MIRRORING");
    expect(await produceToLeader(b.cluster, "orders", 0)).toEqual({ refused: "READ_ONLY_TOPIC" });

    // Failover: `mirror.name` gets `.removed` at once; the partition is read-only until it is STOPPED.
    const removing = b.mirroring.admin.removeTopics("dr", "orders");
    const beforeStopped: unknown[] = [];
    for (;;) {
      const current = await state();
      if (current === "STOPPED") break;
      const r = await produceToLeader(b.cluster, "orders", 0);
      beforeStopped.push("accepted" in r ? r.accepted : r.refused);
      await t.advance(5);
    }
    await t.run(removing);
    expect(beforeStopped.length).toBeGreaterThan(0);
    expect(beforeStopped.filter((r) => r !== "READ_ONLY_TOPIC" && r !== "NOT_LEADER_OR_FOLLOWER")).toEqual(
      [],
    );
    expect(beforeStopped).toContain("READ_ONLY_TOPIC");

    // STOPPED: writable.
    let written: bigint | undefined;
    await t.until(async () => {
      const r = await produceToLeader(b.cluster, "orders", 0);
      if ("accepted" in r) written = r.accepted;
      return written !== undefined;
    }, "a produce accepted after STOPPED");
    const log = b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
    // The local write lands after the mirrored record and the failover's control records.
    expect(written).toBeGreaterThan(0n);
    expect(written).toBe(log.logEndOffset - 1n);
  });
});
