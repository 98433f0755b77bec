import { SeededRandom } from "@cluster-mirror/cluster";
import { ClusterMirroring, EmbeddedSourceConnector } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import { topology } from "./helpers";

/** B mirrors A's `orders` (3 partitions), caught up. */
async function mirroring() {
  const t = topology(["a", "b"]);
  const a = t.node("a");
  const b = t.node("b");
  await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 3 }] }));
  await t.advance(200);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await t.run(b.mirroring.whenCaughtUp("dr"));
  return { t, a, b };
}

describe("recovery of an interrupted --remove is prompt (issue 11 item 11)", () => {
  it("a restart resumes the failover within a second when the engine died after writing mirror.name", async () => {
    const { t, b } = await mirroring();
    // The process dies between `--remove`'s config write and its STOP commands: mirror.name says removed,
    // __mirror_state still says MIRRORING.
    b.mirroring.close();
    b.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "orders" }, [
      { name: "mirror.name", op: "SET", value: "dr.removed" },
    ]);
    const restarted = ClusterMirroring.start({
      cluster: b.cluster,
      sources: new EmbeddedSourceConnector(t.registry),
      random: new SeededRandom(99),
      numStatePartitions: 4,
    });
    await t.advance(1_000);
    const states = (await t.run(restarted.admin.describe("dr"))).map((r) => r.state);
    expect(states).toEqual(["STOPPED", "STOPPED", "STOPPED"]);
    const producer = b.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    await t.run(producer.send({ topic: "orders", messages: [{ key: "k", value: "writable again" }] }));
    restarted.close();
  });

  it("a restart acts at once on an --add cut short after its config write (metadata manager)", async () => {
    const { t, b } = await mirroring();
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    b.mirroring.close();
    b.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "orders" }, [
      { name: "mirror.name", op: "SET", value: "dr" },
    ]);
    const restarted = ClusterMirroring.start({
      cluster: b.cluster,
      sources: new EmbeddedSourceConnector(t.registry),
      random: new SeededRandom(98),
      numStatePartitions: 4,
    });
    await t.advance(1_000);
    const states = (await t.run(restarted.admin.describe("dr"))).map((r) => r.state);
    expect(states).toEqual(["MIRRORING", "MIRRORING", "MIRRORING"]);
    restarted.close();
  });

  it("a repeated --remove is accepted and idempotent, while STOPPING and once STOPPED", async () => {
    const { t, b } = await mirroring();
    const first = await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    const again = await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    expect(again).toEqual(first);
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    const stoppedAgain = await t.run(b.mirroring.admin.removeTopics("dr", "ord.*"));
    expect(stoppedAgain.message).toBe("Removed 1 topic(s) from mirror dr: [orders]");
    expect(b.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("dr.removed");
    const states = (await t.run(b.mirroring.admin.describe("dr"))).map((r) => [r.state, r.lastMirrorEpoch]);
    await t.advance(1_000);
    expect((await t.run(b.mirroring.admin.describe("dr"))).map((r) => [r.state, r.lastMirrorEpoch])).toEqual(
      states,
    );
  });
});
