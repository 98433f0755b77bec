import { describe, expect, it } from "vitest";
import { appendRecords, MIRROR_CONFIG, mirrorEnv, sourceTopic } from "./meta-helpers";

async function setup() {
  const env = mirrorEnv();
  await env.admin.createMirror("m1", { ...MIRROR_CONFIG });
  return env;
}

async function mirrorTopic(env: Awaited<ReturnType<typeof setup>>, topic: string, replicationFactor = 1) {
  sourceTopic(env.source, topic, 1);
  await env.admin.addTopics("m1", topic, { replicationFactor });
  env.coordinators.advance("PREPARING", "MIRRORING");
  env.coordinators.take();
}

const destLog = (env: Awaited<ReturnType<typeof setup>>, topic: string) =>
  env.destination.leaderFor(topic, 0).replica(topic, 0)!.log;

describe("group offset sync safety", () => {
  it("never syncs an offset above the destination's high watermark: records only the leader holds can be lost", async () => {
    const env = await setup();
    await mirrorTopic(env, "t", 2);
    // The mirror fetcher appended 10 records to the leader; its follower has not fetched them yet.
    appendRecords(env.destination, "t", 0, 10, 0);
    const leaderBefore = env.destination.leaderFor("t", 0);
    expect(destLog(env, "t").logEndOffset).toBe(10n);
    expect(destLog(env, "t").highWatermark).toBe(0n);
    // Consumers on the source are at 10.
    env.source.groups.commitOffsets({ groupId: "app", offsets: [{ topic: "t", partition: 0, offset: 10n }] });
    await env.manager.refresh("m1");
    const synced = env.destination.groups.fetchOffsets("app").get("t:0")!.offset;
    // The leader dies before its follower copied the records: the follower (in the ISR) takes over with what
    // the high watermark covers. The source is gone too (that is why one fails over): they never come back.
    env.destination.crashBroker(leaderBefore.brokerId);
    env.scheduler.run(1_000);
    const after = destLog(env, "t");
    expect(env.destination.leaderFor("t", 0).brokerId).not.toBe(leaderBefore.brokerId);
    // A consumer resuming on the destination must not start past what the destination holds.
    expect(synced).toBeLessThanOrEqual(after.logEndOffset);
  });

  it("leaves a failed-over topic's offsets to its consumers, even when the failover lands while the refresh reads the source", async () => {
    const env = await setup();
    await mirrorTopic(env, "t");
    appendRecords(env.destination, "t", 0, 10, 0);
    env.source.groups.commitOffsets({ groupId: "app", offsets: [{ topic: "t", partition: 0, offset: 4n }] });
    await env.manager.refresh("m1");
    expect(env.destination.groups.fetchOffsets("app").get("t:0")?.offset).toBe(4n);
    // The source's consumers go on (the source is back after the failover) while the refresh asks it.
    env.source.groups.commitOffsets({ groupId: "app", offsets: [{ topic: "t", partition: 0, offset: 9n }] });
    const original = env.network.connect.bind(env.network);
    let failover: Promise<unknown> | undefined;
    env.network.connect = () => {
      const conn = original();
      const list = conn.listGroupOffsets.bind(conn);
      conn.listGroupOffsets = async () => {
        const groups = await list();
        failover ??= env.admin.removeTopics("m1", "t");
        await failover;
        return groups;
      };
      return conn;
    };
    env.sources.drop("m1");
    await env.manager.refresh("m1");
    expect(failover).toBeDefined();
    env.coordinators.advance("STOPPING", "STOPPED");
    expect(env.destination.groups.fetchOffsets("app").get("t:0")?.offset).toBe(4n);
    // Consumers on the destination commit there; later refreshes never touch the topic.
    env.destination.groups.commitOffsets({
      groupId: "app",
      offsets: [{ topic: "t", partition: 0, offset: 2n }],
    });
    await env.manager.refresh("m1");
    await env.manager.refresh("m1");
    expect(env.destination.groups.fetchOffsets("app").get("t:0")?.offset).toBe(2n);
  });

  it("never carries offsets of a deleted topic over to a new topic of the same name", async () => {
    const env = await setup();
    await mirrorTopic(env, "t");
    appendRecords(env.destination, "t", 0, 10, 0);
    env.source.groups.commitOffsets({ groupId: "app", offsets: [{ topic: "t", partition: 0, offset: 8n }] });
    await env.manager.refresh("m1");
    expect(env.destination.groups.fetchOffsets("app").get("t:0")?.offset).toBe(8n);
    // The source topic is deleted and created again (another topic id). Kafka deletes a deleted topic's
    // committed offsets (GroupCoordinator.onPartitionsDeleted): the group's consumers start over on the new one.
    env.source.controller.deleteTopic("t");
    sourceTopic(env.source, "t", 1);
    // The operator does what the FAILED copy's message says: fails it over, deletes it, and lets the mirror
    // copy the new topic; the new topic's first 3 records arrive.
    await env.admin.removeTopics("m1", "t");
    env.destination.controller.deleteTopic("t");
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    expect(env.destination.controller.image.topic("t")?.topicId).toBe(
      env.source.controller.image.topic("t")?.topicId,
    );
    env.coordinators.advance("PREPARING", "MIRRORING");
    appendRecords(env.destination, "t", 0, 3, 0);
    await env.manager.refresh("m1");
    // The group never read the new topic: after a failover it must start where auto.offset.reset says,
    // not at the old topic's offset (clamped to the end: every record of the new topic skipped).
    expect(env.source.groups.fetchOffsets("app").get("t:0")).toBeUndefined();
    expect(env.destination.groups.fetchOffsets("app").get("t:0")).toBeUndefined();
  });

  it("keeps each commit's metadata (Kafka Streams' stream time) and syncs a change of it alone", async () => {
    const env = await setup();
    await mirrorTopic(env, "t");
    appendRecords(env.destination, "t", 0, 10, 0);
    const commit = (metadata: string) =>
      env.source.groups.commitOffsets({
        groupId: "streams-app",
        offsets: [{ topic: "t", partition: 0, offset: 4n, leaderEpoch: 0, metadata }],
      });
    commit("AQAAAZNn3QAA");
    await env.manager.refresh("m1");
    expect(env.destination.groups.fetchOffsets("streams-app").get("t:0")).toMatchObject({
      offset: 4n,
      leaderEpoch: 0,
      metadata: "AQAAAZNn3QAA",
    });
    commit("AQAAAZNn3QBB");
    await env.manager.refresh("m1");
    expect(env.destination.groups.fetchOffsets("streams-app").get("t:0")?.metadata).toBe("AQAAAZNn3QBB");
  });
});
