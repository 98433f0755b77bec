import { createRequire } from "node:module";
import { KafkaJSConnectionError } from "kafkajs";
import { afterEach, describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../src/kafkajs-source";

/** A source broker's answers to the group listing's requests: ListGroups, DescribeGroups, OffsetFetch. */
interface FakeGroupBroker {
  listGroups(): Promise<{ groups: { groupId: string; protocolType: string }[] }>;
  describeGroups(args: { groupIds: string[] }): Promise<{
    groups: { groupId: string; state: string; members: unknown[]; errorCode: number }[];
  }>;
  offsetFetch(args: { groupId: string }): Promise<{
    responses: {
      topic: string;
      partitions: { partition: number; offset: string; metadata: string | null }[];
    }[];
  }>;
}

/** A group with members and offset 5 committed on t-0. */
const group = (groupId: string) => ({ groupId, state: "Stable", members: [{}], errorCode: 0 });
const committed = async () => ({
  responses: [{ topic: "t", partitions: [{ partition: 0, offset: "5", metadata: "" }] }],
});

/** kafkajs's own check of a DescribeGroups answer: it rejects the whole answer for one group's error code. */
const { parse: parseDescribeGroups } = createRequire(import.meta.url)(
  "kafkajs/src/protocol/requests/describeGroups/v0/response",
) as { parse: (data: { groups: { groupId: string; errorCode: number }[] }) => Promise<never> };

/** A DescribeGroups answer as kafkajs gives it when its groups carry these error codes. */
function describedWithErrors(groups: { groupId: string; errorCode: number }[]): Promise<never> {
  return parseDescribeGroups({ groups });
}

const sources: KafkajsSourceCluster[] = [];
afterEach(async () => {
  for (const s of sources.splice(0)) await s.close();
});

/**
 * A Kafka source whose Metadata names these brokers (and topic t of one partition) and whose connections
 * to them are these fakes: no socket is opened.
 */
function sourceOf(brokers: Map<number, FakeGroupBroker>): KafkajsSourceCluster {
  const source = new KafkajsSourceCluster("m", { "bootstrap.servers": "127.0.0.1:1" });
  sources.push(source);
  Object.assign(source, {
    metadata: async () => ({
      throttleTimeMs: 0,
      brokers: [...brokers.keys()].map((nodeId) => ({ nodeId, host: "127.0.0.1", port: 1, rack: null })),
      clusterId: "fake",
      controllerId: 1,
      topics: [{ errorCode: 0, name: "t", isInternal: false, partitions: [{ partition: 0, errorCode: 0 }] }],
    }),
    admin: async (nodeId: number) => brokers.get(nodeId),
  });
  return source;
}

describe("KafkajsSourceCluster.listGroupOffsets", () => {
  it("asks the source's brokers at the same time: one that does not answer yet delays no other", async () => {
    const events: string[] = [];
    const brokers = new Map<number, FakeGroupBroker>([
      [
        1,
        {
          // A frozen broker: its request times out, after the other broker was asked (when it is asked).
          listGroups: async () => {
            events.push("broker 1 asked");
            for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
            events.push("broker 1 timed out");
            throw new KafkaJSConnectionError("Request ListGroups(key: 16, version: 2) timed out");
          },
          describeGroups: async () => ({ groups: [] }),
          offsetFetch: committed,
        },
      ],
      [
        2,
        {
          listGroups: async () => {
            events.push("broker 2 asked");
            return { groups: [{ groupId: "app", protocolType: "consumer" }] };
          },
          describeGroups: async () => ({ groups: [group("app")] }),
          offsetFetch: committed,
        },
      ],
    ]);
    const errors: Error[] = [];
    const groups = await sourceOf(brokers).listGroupOffsets({ onError: (e) => errors.push(e) });
    expect(events).toEqual(["broker 1 asked", "broker 2 asked", "broker 1 timed out"]);
    expect(groups.map((g) => g.groupId)).toEqual(["app"]);
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringMatching(
        /^m: groups on source broker 1: .*timed out.*; the groups it coordinates are left out/,
      ),
    ]);
  });

  it("reports a group its coordinator answers with an error (COORDINATOR_LOAD_IN_PROGRESS), and lists the broker's other groups", async () => {
    const brokers = new Map<number, FakeGroupBroker>([
      [
        1,
        {
          listGroups: async () => ({
            groups: [
              { groupId: "app", protocolType: "consumer" },
              { groupId: "loading", protocolType: "consumer" },
              { groupId: "secret", protocolType: "consumer" },
            ],
          }),
          // COORDINATOR_LOAD_IN_PROGRESS for a group its coordinator is loading, GROUP_AUTHORIZATION_FAILED
          // for one the principal may not describe.
          describeGroups: async ({ groupIds }) => {
            const codes = groupIds.map((groupId) => ({
              groupId,
              errorCode: groupId === "loading" ? 14 : groupId === "secret" ? 30 : 0,
            }));
            if (codes.some((g) => g.errorCode !== 0)) return describedWithErrors(codes);
            return { groups: groupIds.map(group) };
          },
          offsetFetch: committed,
        },
      ],
    ]);
    const source = sourceOf(brokers);
    const errors: Error[] = [];
    const groups = await source.listGroupOffsets({ onError: (e) => errors.push(e) });
    expect(groups.map((g) => g.groupId)).toEqual(["app"]);
    // The group refused to the principal is left out without a word, as Kafka lists; the loading one is named.
    expect(errors.map((e) => e.message)).toEqual([
      "m: groups on source broker 1: group 'loading': The coordinator is loading and hence can't process requests for this group; the group's offsets are left out of this listing until it answers",
    ]);
    expect(errors[0]).toMatchObject({ errorName: "COORDINATOR_LOAD_IN_PROGRESS", code: 14, retriable: true });
    // Without onError, as Kafka's ListConsumerGroupsResult.all(), the error rejects the listing.
    await expect(source.listGroupOffsets()).rejects.toMatchObject({
      errorName: "COORDINATOR_LOAD_IN_PROGRESS",
      message: expect.stringContaining("group 'loading'"),
    });
  });
});
