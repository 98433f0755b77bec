import { ControlRecordType, controlTypeOf, decodeRecords } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { leaderBatches, topology } from "./helpers";

/**
 * The seeds' transactions example: tx 4001 commits on the source after the mirror last fetched (its COMMIT
 * marker is never mirrored), tx 4002 aborted before that (its ABORT marker is mirrored). At failover the
 * destination aborts 4001 and keeps 4002 aborted; read_committed consumers there never block.
 */
describe("seeds: transactions at failover", () => {
  it("aborts the transaction whose commit was not mirrored, keeps the aborted one aborted, never blocks", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    await t.run(
      a.kafka
        .admin()
        .createTopics({ topics: [{ topic: "payments", numPartitions: 1, replicationFactor: 3 }] }),
    );
    const plain = a.kafka.producer({ idempotent: true });
    await t.run(plain.connect());
    await t.run(plain.send({ topic: "payments", messages: [{ value: "committed-before" }] }));

    const p4001 = a.kafka.producer({ transactionalId: "tx-4001" });
    const p4002 = a.kafka.producer({ transactionalId: "tx-4002" });
    await t.run(p4001.connect());
    await t.run(p4002.connect());
    const tx4001 = await t.run(p4001.transaction());
    const tx4002 = await t.run(p4002.transaction());
    await t.run(tx4001.send({ topic: "payments", messages: [{ value: "4001-a" }, { value: "4001-b" }] }));
    await t.run(tx4002.send({ topic: "payments", messages: [{ value: "4002-a" }] }));
    await t.run(tx4002.abort());

    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "payments"));
    await t.run(b.mirroring.whenCaughtUp("dr"));

    // The mirror stops fetching (paused), then 4001 commits on the source: its marker is not mirrored.
    await t.run(b.mirroring.admin.pauseTopics("dr", "payments"));
    await t.run(b.mirroring.whenState("dr", "PAUSED"));
    await t.run(tx4001.commit());
    const onSource = leaderBatches(a.cluster, "payments", 0).map((x) =>
      x.batch.isControl ? controlTypeOf(x.batch) : "data",
    );
    expect(onSource.filter((k) => k === ControlRecordType.COMMIT)).toHaveLength(1);

    // Failover from PAUSED.
    await t.run(b.mirroring.admin.removeTopics("dr", "payments"));
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    const onDestination = leaderBatches(b.cluster, "payments", 0).map((x) => x.batch);
    const kinds = onDestination.map((x) => (x.isControl ? controlTypeOf(x) : "data"));
    // data, 4001 data, 4002 data, 4002 ABORT (mirrored), then the failover's ABORT for 4001 and the PID reset.
    expect(kinds.filter((k) => k === ControlRecordType.COMMIT)).toHaveLength(0);
    expect(kinds.filter((k) => k === ControlRecordType.ABORT)).toHaveLength(2);
    expect(kinds.at(-1)).toBe(ControlRecordType.MIRROR_PID_RESET);
    const log = b.cluster.leaderFor("payments", 0).replica("payments", 0)!.log;
    expect(log.ongoingTransactions()).toEqual([]);
    expect(log.lastStableOffset).toBe(log.highWatermark);
    expect(log.producerStateSnapshot()).toEqual([]);

    // read_committed on the new primary: neither transaction's records, and it does not block.
    const consumer = b.kafka.consumer({ groupId: "audit", isolation: "read_committed" });
    await t.run(consumer.connect());
    await t.run(consumer.subscribe({ topic: "payments", fromBeginning: true }));
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      for (const m of await t.run(consumer.poll())) seen.push(m.message.value?.toString() ?? "");
    }
    expect(seen).toEqual(["committed-before"]);
    // The source still has 4001 committed.
    const sourceValues = leaderBatches(a.cluster, "payments", 0).flatMap((x) =>
      x.batch.isControl ? [] : decodeRecords(x.batch).map((r) => r.value?.toString()),
    );
    expect(sourceValues).toContain("4001-a");
  });
});
