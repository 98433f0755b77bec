import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import { batch } from "../../packages/cluster/test/helpers";
import { failedOverOnB, topology } from "./helpers";

const MIRROR_NAME_CONFIG = "mirror.name";

describe("a re-add under another mirror", () => {
  it("a re-add under another mirror stays read-only when the old mirror's STOPPED partition is loaded again", async () => {
    const { t, b } = await failedOverOnB({ seed: 3 });
    // Re-added under another mirror of the same source (a failback through a second mirror definition).
    await t.run(b.mirroring.admin.createMirror("dr2", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr2", "t", { truncateLocalWrites: true }));
    await t.run(b.mirroring.whenState("dr2", "MIRRORING"));
    await t.advance(1000);
    const image = () => b.cluster.controller.image;
    expect(image().topic("t")!.configs.get(MIRROR_NAME_CONFIG)).toBe("dr2");
    expect(image().partition("t", 0)!.mirrorReadOnly).toBe(true);
    const topicId = image().topic("t")!.topicId;
    const leaderOf = (sp: number) => image().partition(MIRROR_STATE_TOPIC, sp)!.leader;
    const oldState = mirrorStatePartitionFor({ mirror: "dr", topicId, partition: 0 }, 4);
    // Every clear published while mirror.name asks for mirroring (the sim's watchReadOnlyClears).
    const clears: string[] = [];
    b.cluster.controller.subscribe(({ record }) => {
      if (record.type !== "MirrorReadOnly" || record.readOnly) return;
      clears.push(String(image().topicsById.get(record.topicId)?.configs.get(MIRROR_NAME_CONFIG)));
    }, b.cluster.controller.metadataLog().length);
    // The broker leading the old mirror's __mirror_state partition crashes: another loads its STOPPED record.
    b.cluster.crashBroker(leaderOf(oldState));
    const writable: number[] = [];
    for (let ms = 0; ms < 3000; ms += 5) {
      const name = image().topic("t")!.configs.get(MIRROR_NAME_CONFIG);
      if (name === "dr2" && !(image().partition("t", 0)!.mirrorReadOnly ?? true)) writable.push(ms);
      await t.advance(5);
    }
    expect(clears).toEqual([]);
    expect(writable).toEqual([]);
  });

  // The re-add is failed over in turn while the old mirror's STOPPED partition is loaded again: the flag is
  // the re-add's until its STOPPING wrote the barrier. Before, the old mirror cleared it under `dr2.removed`,
  // while dr2 still mirrored (the crash in the removal's step) or was STOPPING: local writes could land
  // among mirrored batches or before the ABORT markers and PID reset.
  for (const [seed, delayMs] of [
    [3, -1],
    [3, 0],
    [3, 5],
    [7, 0],
  ] as const) {
    it(`stays read-only until the re-add's own failover is STOPPED (seed ${seed}, crash after ${delayMs} ms)`, async () => {
      const { t, b } = await failedOverOnB({ seed });
      await t.run(b.mirroring.admin.createMirror("dr2", { "bootstrap.servers": "a:9092" }));
      await t.run(b.mirroring.admin.addTopics("dr2", "t", { truncateLocalWrites: true }));
      await t.run(b.mirroring.whenState("dr2", "MIRRORING"));
      await t.advance(1000);
      const image = () => b.cluster.controller.image;
      const topicId = image().topic("t")!.topicId;
      const oldState = mirrorStatePartitionFor({ mirror: "dr", topicId, partition: 0 }, 4);
      const dr2State = () => b.mirroring.coordinators.describe("dr2")[0]?.state;
      // Every clear published before dr2's partition is STOPPED.
      const early: string[] = [];
      b.cluster.controller.subscribe(({ record }) => {
        if (record.type === "MirrorReadOnly" && !record.readOnly && dr2State() !== "STOPPED")
          early.push(String(dr2State()));
      }, b.cluster.controller.metadataLog().length);
      const removing = b.mirroring.admin.removeTopics("dr2", "t").catch((e: unknown) => e);
      if (delayMs >= 0) await t.advance(delayMs);
      // The broker leading the old mirror's __mirror_state partition crashes: another loads its STOPPED record.
      b.cluster.crashBroker(image().partition(MIRROR_STATE_TOPIC, oldState)!.leader);
      await t.run(removing);
      await t.run(b.mirroring.whenState("dr2", "STOPPED", { timeoutMs: 120_000 }));
      expect(early).toEqual([]);
      // The failover ends writable, as always.
      expect(image().partition("t", 0)!.mirrorReadOnly ?? false).toBe(false);
    });
  }
});

async function produceTo(
  node: ReturnType<ReturnType<typeof topology>["node"]>,
  run: <T>(w: Promise<T>) => Promise<T>,
  partition: number,
) {
  const producer = node.kafka.producer();
  await run(producer.connect());
  try {
    const sent = await run(
      producer.send({ topic: "t", messages: [{ value: "local", partition }], acks: -1 }),
    );
    return sent[0]?.errorCode;
  } catch (error) {
    return (
      (error as { type?: string; errorName?: string }).errorName ??
      (error as { type?: string }).type ??
      String(error)
    );
  }
}

describe("read-only flags that nothing but the removal would ever clear", () => {
  it("a re-add that raised the partition count, removed again before its START, leaves every partition writable", async () => {
    const { t, a, b } = await failedOverOnB();
    // The source grew a partition meanwhile.
    await t.run(a.kafka.admin().createPartitions({ topicPartitions: [{ topic: "t", count: 2 }] }));
    // The re-add's first changes (addTopicsNow: the partitions first, then mirror.name), its START not sent yet.
    b.cluster.controller.createPartitions("t", 2);
    b.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: MIRROR_NAME_CONFIG, op: "SET", value: "dr" },
    ]);
    await t.run(b.mirroring.admin.removeTopics("dr", "t"));
    await t.advance(60_000);
    expect(b.cluster.controller.image.topic("t")!.configs.get(MIRROR_NAME_CONFIG)).toBe("dr.removed");
    expect(await produceTo(b, t.run, 0)).toBe(0);
    expect(await produceTo(b, t.run, 1)).toBe(0);
  });

  it("a mirror topic created fresh whose START never came, then removed, becomes writable", async () => {
    const t = topology(["a", "b"], { seed: 7 });
    const a = t.node("a");
    const b = t.node("b");
    await t.run(
      a.kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1, replicationFactor: 3 }] }),
    );
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    // The add's first change (createMirrorTopic) and a removal before its START.
    b.cluster.controller.createTopic({
      name: "t",
      topicId: a.cluster.controller.image.topic("t")!.topicId,
      numPartitions: 1,
      replicationFactor: 3,
      configs: { [MIRROR_NAME_CONFIG]: "dr" },
    });
    await t.run(b.mirroring.admin.removeTopics("dr", "t"));
    await t.advance(60_000);
    expect(b.cluster.controller.image.topic("t")!.configs.get(MIRROR_NAME_CONFIG)).toBe("dr.removed");
    expect(await produceTo(b, t.run, 0)).toBe(0);
  });

  it("a partition added to a failed-over topic is writable", async () => {
    const { t, b } = await failedOverOnB();
    await t.run(b.kafka.admin().createPartitions({ topicPartitions: [{ topic: "t", count: 2 }] }));
    await t.advance(1000);
    expect(await produceTo(b, t.run, 0)).toBe(0);
    expect(await produceTo(b, t.run, 1)).toBe(0);
  });
});

describe("a removal that lands between a re-add's START and PREPARING's read-only step", () => {
  it("a write acknowledged after the removal is not truncated by the re-add's PREPARING", async () => {
    const { t, b } = await failedOverOnB();
    const coordinators = b.mirroring.coordinators;
    const original = coordinators.command.bind(coordinators);
    let produced: Promise<{ baseOffset: bigint } | string> | undefined;
    coordinators.command = (key, command) => {
      const sent = original(key, command);
      if (command.type === "START" && key.topic === "t" && produced === undefined) {
        // The START is on its way (its PREPARING record appended, not committed): the operator removes the
        // re-add (kafka-configs), and an application writes at once.
        b.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
          { name: MIRROR_NAME_CONFIG, op: "SET", value: "dr.removed" },
        ]);
        produced = b.cluster
          .leaderFor("t", 0)
          .produce({ topic: "t", partition: 0, batch: batch(["local"]), acks: -1 })
          .catch((error: { errorName?: string }) => String(error.errorName ?? error));
      }
      return sent;
    };
    // The re-add's first change; the metadata manager sends its START on the next turn.
    b.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: MIRROR_NAME_CONFIG, op: "SET", value: "dr" },
    ]);
    await t.until(() => produced !== undefined, "the re-add's START");
    const result = await t.run(produced!);
    await t.advance(60_000);
    coordinators.command = original;
    const leader = b.cluster.leaderFor("t", 0).replica("t", 0)!;
    const data = [...leader.log.batches()].filter((x) => !x.isControl).map((x) => x.baseOffset);
    // Acknowledged, so it must still be there; or refused.
    if (typeof result !== "string") expect(data).toContain(result.baseOffset);
    else expect(result).toBe("READ_ONLY_TOPIC");
  });
});
