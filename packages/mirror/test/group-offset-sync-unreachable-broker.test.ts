import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import type { ListGroupOffsetsOptions } from "../src/ports";
import { appendRecords, MIRROR_CONFIG, mirrorEnv, sourceTopic } from "./meta-helpers";

/**
 * A source of several brokers lists each one's groups (Kafka's ListGroups goes to every broker): here group
 * "billing" is coordinated by a broker that can go down, "app" by one that stays. As Kafka's
 * `ListConsumerGroupsResult`, the listing without `onError` fails on the broker that is down (`all()`),
 * and with it reports that broker and gives the other groups (`valid()` and `errors()`).
 */
function brokerOfBillingCanGoDown(env: ReturnType<typeof mirrorEnv>) {
  const down = { value: false };
  const original = env.network.connect.bind(env.network);
  env.network.connect = () => {
    const conn = original();
    const list = conn.listGroupOffsets.bind(conn);
    conn.listGroupOffsets = async (options?: ListGroupOffsetsOptions) => {
      const groups = await list();
      if (!down.value) return groups;
      const error = new KafkaError(
        "BROKER_NOT_AVAILABLE",
        8,
        true,
        "m1: connect to source broker 2: Connection error: connect ECONNREFUSED",
      );
      if (!options?.onError) throw error;
      options.onError(error);
      return groups.filter((g) => g.groupId !== "billing");
    };
    return conn;
  };
  return down;
}

/** Mirror m1 of topic t MIRRORING, its copy holding 10 records; `down.value = true` takes billing's broker down. */
async function mirroredWithBrokerDown(env: ReturnType<typeof mirrorEnv>) {
  const down = brokerOfBillingCanGoDown(env);
  await env.admin.createMirror("m1", { ...MIRROR_CONFIG });
  sourceTopic(env.source, "t", 1);
  await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
  env.coordinators.advance("PREPARING", "MIRRORING");
  env.coordinators.take();
  appendRecords(env.destination, "t", 0, 10, 0);
  return down;
}

describe("group offset sync while a source broker is down", () => {
  it("syncs the groups of the brokers that answer, reports the one that does not, and keeps the offsets of its groups", async () => {
    const env = mirrorEnv();
    const down = await mirroredWithBrokerDown(env);
    const commit = (groupId: string, offset: bigint) =>
      env.source.groups.commitOffsets({ groupId, offsets: [{ topic: "t", partition: 0, offset }] });
    const synced = (groupId: string) => env.destination.groups.fetchOffsets(groupId).get("t:0")?.offset;
    commit("app", 3n);
    commit("billing", 5n);
    await env.manager.refresh("m1");
    expect([synced("app"), synced("billing")]).toEqual([3n, 5n]);

    down.value = true;
    commit("app", 8n);
    commit("billing", 7n);
    await env.manager.refresh("m1");
    // "app" goes on; "billing" keeps what was synced (neither dropped nor moved) while its broker is down.
    expect([synced("app"), synced("billing")]).toEqual([8n, 5n]);
    expect(env.metrics.syncErrors("m1")).toEqual([
      { mirror: "m1", kind: "ConsumerGroupOffsetSyncError", count: 1 },
    ]);
    expect(String(env.errors[0]?.error)).toContain("source broker 2");

    down.value = false;
    await env.manager.refresh("m1");
    expect([synced("app"), synced("billing")]).toEqual([8n, 7n]);
    expect(env.metrics.syncErrors("m1")).toEqual([
      { mirror: "m1", kind: "ConsumerGroupOffsetSyncError", count: 1 },
    ]);
  });
});

describe("verify while a source broker is down", () => {
  it("compares the groups of the brokers that answer, and is not OK for the ones it could not compare", async () => {
    const env = mirrorEnv();
    const down = await mirroredWithBrokerDown(env);
    env.source.groups.commitOffsets({ groupId: "app", offsets: [{ topic: "t", partition: 0, offset: 3n }] });
    env.source.groups.commitOffsets({
      groupId: "billing",
      offsets: [{ topic: "t", partition: 0, offset: 5n }],
    });
    await env.manager.refresh("m1");

    down.value = true;
    const groups = (await env.admin.verifyMirror("m1")).checks.find((c) => c.check === "group offsets");
    expect(groups).toEqual({
      check: "group offsets",
      ok: false,
      compared:
        "1 group, 1 committed offset; some groups not compared (the source did not answer 1 request: verify again once it answers)",
      differences: ["not compared: m1: connect to source broker 2: Connection error: connect ECONNREFUSED"],
    });
    down.value = false;
    const again = (await env.admin.verifyMirror("m1")).checks.find((c) => c.check === "group offsets");
    expect(again).toMatchObject({ ok: true, compared: "2 groups, 2 committed offsets", differences: [] });
  });
});
