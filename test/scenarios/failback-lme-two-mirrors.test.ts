import { describe, expect, it } from "vitest";
import { leaderBatches, topology } from "./helpers";

/** Every batch of `orders-0` on a cluster's leader, as hex: two logs compared byte for byte. */
const hexes = (cluster: Parameters<typeof leaderBatches>[0]) =>
  leaderBatches(cluster, "orders", 0).map((x) => x.hex);

describe("the LME a cluster answers for a topic two of its mirrors held in turn", () => {
  it("is the latest failover's (the mirror `mirror.name` names), so a failback cuts only what that failover left behind", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    await t.run(
      a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
    );
    const onA = a.kafka.producer({ idempotent: true });
    await t.run(onA.connect());
    const sendOnA = (value: string) =>
      t.run(onA.send({ topic: "orders", messages: [{ key: value, value }], acks: -1 }));
    for (let i = 0; i < 3; i++) await sendOnA(`a-${i}`);
    const firstEpoch = Math.max(...leaderBatches(a.cluster, "orders", 0).map((x) => x.epoch));

    // Mirror `first` holds the topic twice (added, failed over, added again, failed over): its key's
    // StateEpoch runs ahead of what one add and one failover give another mirror's key.
    await t.run(b.mirroring.admin.createMirror("first", { "bootstrap.servers": "a:9092" }));
    for (let round = 0; round < 2; round++) {
      await t.run(b.mirroring.admin.addTopics("first", "orders"));
      await t.run(b.mirroring.whenCaughtUp("first"));
      await t.run(b.mirroring.admin.removeTopics("first", "orders"));
      await t.run(b.mirroring.whenState("first", "STOPPED"));
    }

    // A goes on in a later leader epoch (elections there).
    a.cluster.controller.bumpLeaderEpochs([{ topic: "orders", partition: 0, minLeaderEpoch: 5 }]);
    await t.advance(200);
    for (let i = 3; i < 6; i++) await sendOnA(`a-${i}`);
    const secondEpoch = Math.max(...leaderBatches(a.cluster, "orders", 0).map((x) => x.epoch));
    expect(secondEpoch).toBeGreaterThan(firstEpoch);
    const endOnA = a.cluster.leaderFor("orders", 0).replica("orders", 0)!.log.logEndOffset;

    // Mirror `second` takes the topic over from the same source, catches up and fails over: the latest
    // failover, at A's later epoch.
    await t.run(b.mirroring.admin.createMirror("second", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("second", "orders"));
    await t.run(b.mirroring.whenCaughtUp("second"));
    // What `--failover-preview` says a failback after this failover cuts on A: nothing (A wrote nothing since).
    const [preview] = await t.run(b.mirroring.admin.previewFailover("second", "orders"));
    expect(preview).toMatchObject({ lastMirrorEpoch: secondEpoch, failbackTruncation: null });
    await t.run(b.mirroring.admin.removeTopics("second", "orders"));
    await t.run(b.mirroring.whenState("second", "STOPPED"));
    expect(b.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("second.removed");
    const [first] = await t.run(b.mirroring.admin.describe("first"));
    const [second] = await t.run(b.mirroring.admin.describe("second"));
    expect([first?.lastMirrorEpoch, second?.lastMirrorEpoch]).toEqual([firstEpoch, secondEpoch]);

    // B, the new primary, acknowledges records of its own.
    const onB = b.kafka.producer({ idempotent: true });
    await t.run(onB.connect());
    for (let i = 0; i < 2; i++) {
      await t.run(onB.send({ topic: "orders", messages: [{ key: `b-${i}`, value: `b-${i}` }], acks: -1 }));
    }
    const acknowledgedOnB = hexes(b.cluster);

    // Failback: A asks B for the LME. The latest failover's (`second`, A's later epoch) keeps everything A
    // holds, all of it mirrored by B; `first`'s would cut A back to the end of its first epoch.
    const topicId = b.cluster.controller.image.topic("orders")!.topicId;
    expect(await b.mirroring.asSource().lastMirrorEpoch?.(topicId, 0)).toBe(secondEpoch);
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.run(a.mirroring.whenCaughtUp("back"));
    // No cut of A's log below its end: every record A held was B's too.
    const cuts = a.cluster.controller.image.partition("orders", 0)?.logRewrites ?? [];
    expect(cuts.filter((cut) => cut.offset < endOnA)).toEqual([]);
    expect(hexes(a.cluster)).toEqual(hexes(b.cluster));
    expect(hexes(a.cluster)).toEqual(acknowledgedOnB);
  });
});
