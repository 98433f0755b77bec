import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import { failedOverOnB } from "./helpers";

const MIRROR_NAME_CONFIG = "mirror.name";

/** t mirrored a -> b, then failed over (STOPPED, writable), and the re-add's first change made on b. */
async function reAddStarted() {
  const { t, a, b } = await failedOverOnB();
  // The re-add's first change (addTopics' setMirrorName): t is a mirror again, read-only at once.
  b.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
    { name: MIRROR_NAME_CONFIG, op: "SET", value: "dr" },
  ]);
  const readOnly = () => b.cluster.controller.image.partition("t", 0)!.mirrorReadOnly;
  return { t, a, b, readOnly };
}

describe("a re-add that set mirror.name while a coordinator loads the STOPPED partition again", () => {
  it("the loaded STOPPED step does not make the topic writable again under its mirror.name", async () => {
    const { t, b } = await reAddStarted();
    const topicId = b.cluster.controller.image.topic("t")!.topicId;
    const statePartition = mirrorStatePartitionFor({ mirror: "dr", topicId, partition: 0 }, 4);
    const coordinatorBroker = b.cluster.controller.image.partition(
      MIRROR_STATE_TOPIC,
      statePartition,
    )!.leader;
    // The coordinator's broker crashes before the START: another loads the STOPPED partition.
    b.cluster.crashBroker(coordinatorBroker);
    const writable: number[] = [];
    for (let ms = 0; ms < 3000; ms += 5) {
      const meta = b.cluster.controller.image.partition("t", 0)!;
      const name = b.cluster.controller.image.topic("t")!.configs.get(MIRROR_NAME_CONFIG);
      if (name === "dr" && !(meta.mirrorReadOnly ?? true)) writable.push(ms);
      await t.advance(5);
    }
    expect(writable).toEqual([]);
    // The metadata manager's START takes it from there: a mirror again, the source's next record copied.
    await t.run(b.mirroring.whenState("dr", "MIRRORING"));
    const producer = t.node("a").kafka.producer();
    await t.run(producer.connect());
    await t.run(producer.send({ topic: "t", messages: [{ value: "after" }], acks: -1 }));
    await t.run(b.mirroring.whenCaughtUp("dr"));
    const source = t.node("a").cluster.leaderFor("t", 0).replica("t", 0)!.log.logEndOffset;
    expect(b.cluster.leaderFor("t", 0).replica("t", 0)!.log.logEndOffset).toBe(source);
  });

  it("a re-add removed again before its START leaves the topic writable", async () => {
    const { t, b, readOnly } = await reAddStarted();
    expect(readOnly()).toBe(true);
    await t.run(b.mirroring.admin.removeTopics("dr", "t"));
    expect(b.cluster.controller.image.topic("t")!.configs.get(MIRROR_NAME_CONFIG)).toBe("dr.removed");
    expect(readOnly()).toBe(false);
    const producer = b.kafka.producer();
    await t.run(producer.connect());
    const sent = await t.run(producer.send({ topic: "t", messages: [{ value: "local" }], acks: -1 }));
    expect(sent[0]?.errorCode).toBe(0);
  });
});
