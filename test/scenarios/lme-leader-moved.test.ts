import { MirrorFetcherManager, type MirrorPartitionKey } from "@cluster-mirror/mirror";
import { decodeRecords } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { leaderBatches, topology } from "./helpers";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the LME of a failover whose destination leader moved while its fetcher was removed", () => {
  it("is the highest mirrored epoch of the partition's log, read on its leader now", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    await t.run(
      a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
    );
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    const send = (value: string) =>
      t.run(producer.send({ topic: "orders", messages: [{ key: value, value }], acks: -1 }));
    for (let i = 0; i < 3; i++) await send(`a-${i}`);
    // A's leader epoch moves on (elections, earlier failovers): its later batches carry epoch >= 5.
    a.cluster.controller.bumpLeaderEpochs([{ topic: "orders", partition: 0, minLeaderEpoch: 5 }]);
    await t.advance(200);
    for (let i = 3; i < 6; i++) await send(`a-${i}`);
    const mirroredEpoch = Math.max(...leaderBatches(a.cluster, "orders", 0).map((x) => x.epoch));
    expect(mirroredEpoch).toBeGreaterThanOrEqual(5);

    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders", { replicationFactor: 3 }));
    const caughtUp = async () => {
      const rows = await b.mirroring.admin.describe("dr");
      return rows.length === 1 && rows[0]!.state === "MIRRORING" && rows[0]!.lag === 0n;
    };
    await t.until(caughtUp, "dr caught up");

    // B's leader of orders-0 is not its preferred replica (that broker restarted): a preferred leader
    // election will move it back.
    const preferred = b.cluster.controller.image.partition("orders", 0)!.replicas[0]!;
    expect(b.cluster.controller.image.partition("orders", 0)!.leader).toBe(preferred);
    b.cluster.stopBroker(preferred);
    await t.advance(500);
    b.cluster.startBroker(preferred);
    await t.until(
      () => b.cluster.controller.image.partition("orders", 0)!.isr.includes(preferred),
      "the preferred replica back in the ISR",
    );
    await t.until(caughtUp, "dr caught up again");
    const fetching = b.cluster.controller.image.partition("orders", 0)!.leader;
    expect(fetching).not.toBe(preferred);

    // Failover. The coordinator asks the leader's fetcher manager to drop the partition; before the fetcher
    // acknowledges (in Kafka: while its in-flight fetch completes), a preferred leader election moves the
    // destination leader to another broker. The fetcher's broker keeps running, as a follower.
    const removePartition = MirrorFetcherManager.prototype.removePartition;
    let armed = true;
    vi.spyOn(MirrorFetcherManager.prototype, "removePartition").mockImplementation(function (
      this: MirrorFetcherManager,
      key: MirrorPartitionKey,
    ) {
      const removed = removePartition.call(this, key);
      if (armed && key.topic === "orders") {
        armed = false;
        b.cluster.controller.electPreferredLeaders();
      }
      return removed;
    });
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.until(
      async () => (await b.mirroring.admin.describe("dr")).every((r) => r.state === "STOPPED"),
      "STOPPED",
    );
    expect(armed).toBe(false);
    expect(b.cluster.controller.image.partition("orders", 0)!.leader).toBe(preferred);
    const onB = leaderBatches(b.cluster, "orders", 0);
    const mirroredOnB = onB.filter((x) => !x.batch.isControl || x.batch.controlType !== 7);
    expect(Math.max(...mirroredOnB.map((x) => x.epoch))).toBe(mirroredEpoch);

    // The LME B recorded (and answers a failback with) is the highest epoch among the mirrored batches.
    const [row] = await b.mirroring.admin.describe("dr");
    expect(row!.lastMirrorEpoch).toBe(mirroredEpoch);

    // Failback: A cuts its log at the end of epoch LME (its divergent tail goes) and keeps the rest. With
    // LME -1 it truncated fully and copied the whole partition again (the end state is the same).
    await t.run(producer.send({ topic: "orders", messages: [{ key: "lost", value: "divergent on a" }] }));
    const truncations: string[] = [];
    const aLeader = a.cluster.leaderFor("orders", 0);
    const truncateFully = aLeader.truncateFullyAndStartAt.bind(aLeader);
    vi.spyOn(aLeader, "truncateFullyAndStartAt").mockImplementation((...args) => {
      truncations.push(`truncateFullyAndStartAt(${String(args[2])})`);
      truncateFully(...args);
    });
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.until(async () => {
      const r = await a.mirroring.admin.describe("back");
      return r.length === 1 && r[0]!.state === "MIRRORING" && r[0]!.lag === 0n;
    }, "back caught up");
    expect(leaderBatches(a.cluster, "orders", 0).map((x) => x.hex)).toEqual(
      leaderBatches(b.cluster, "orders", 0).map((x) => x.hex),
    );
    const values = leaderBatches(a.cluster, "orders", 0).flatMap((x) =>
      x.batch.isControl ? [] : decodeRecords(x.batch).map((r) => r.value?.toString()),
    );
    expect(values).not.toContain("divergent on a");
    expect(truncations).toEqual([]);
  });
});
