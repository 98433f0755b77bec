import { describe, expect, it } from "vitest";
import { topology } from "./helpers";

/**
 * Fan-in (A -> C, B -> C) must use distinct topics: a topic of the same name on both sources is refused by
 * the second mirror, by --add as by its topics.include, and the first mirror's copy is left as it is. The
 * refusal names the mirror whose copy it is and never advises deleting it.
 */
describe("fan-in of two sources' topics of the same name", () => {
  async function fanIn() {
    const t = topology(["a", "b", "c"]);
    const a = t.node("a");
    const b = t.node("b");
    const c = t.node("c");
    for (const source of [a, b]) {
      await t.run(source.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1 }] }));
    }
    await t.advance(200);
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    await t.run(producer.send({ topic: "orders", messages: [{ key: "k", value: "from a" }] }));
    await t.run(c.mirroring.admin.createMirror("from-a", { "bootstrap.servers": "a:9092" }));
    await t.run(c.mirroring.admin.addTopics("from-a", "orders"));
    await t.run(c.mirroring.whenCaughtUp("from-a"));
    return { t, a, b, c };
  }

  it("--add is refused with INCONSISTENT_TOPIC_ID naming the other mirror, changing nothing", async () => {
    const { t, a, c } = await fanIn();
    await t.run(c.mirroring.admin.createMirror("from-b", { "bootstrap.servers": "b:9092" }));
    const before = c.cluster.controller.image.mirrors.get("from-b");
    const error = await t.run(c.mirroring.admin.addTopics("from-b", "orders")).catch((e: unknown) => e);
    expect(error).toMatchObject({ errorName: "INCONSISTENT_TOPIC_ID" });
    const message = (error as Error).message;
    expect(message).toContain("mirror 'from-a''s copy");
    expect(message).not.toMatch(/delete/i);
    // Nothing changed: the topic is from-a's, with a's id and records; from-b's patterns are as they were.
    const topic = c.cluster.controller.image.topic("orders")!;
    expect(topic.configs.get("mirror.name")).toBe("from-a");
    expect(topic.topicId).toBe(a.cluster.controller.image.topic("orders")!.topicId);
    expect(c.cluster.controller.image.mirrors.get("from-b")).toEqual(before);
    expect(c.mirroring.coordinators.describe("from-b")).toEqual([]);
  });

  it("topics.include matching it skips it, saying whose it is", async () => {
    const { t, c } = await fanIn();
    await t.run(
      c.mirroring.admin.createMirror("from-b", { "bootstrap.servers": "b:9092", "topics.include": "orders" }),
    );
    const report = await t.run(c.mirroring.refreshNow("from-b"));
    expect(report.createdTopics).toEqual([]);
    expect(report.skippedTopics).toEqual([
      { topic: "orders", why: expect.stringContaining("belongs to mirror 'from-a'") },
    ]);
    expect(c.cluster.controller.image.topic("orders")!.configs.get("mirror.name")).toBe("from-a");
  });
});
