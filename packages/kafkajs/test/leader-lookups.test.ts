import { describe, expect, it } from "vitest";
import {
  type LeaderLookup,
  LeaderLookupBatcher,
  type LookupAnswer,
  partitionKey,
} from "../src/leader-lookups";

/** A batcher whose requests are recorded and answered with offset = partition * 10 (or fail when told). */
function recordingBatcher(options: { failLeader?: number; leaveOut?: string } = {}) {
  const requests: { leaderId: number; lookups: readonly LeaderLookup[] }[] = [];
  const batcher = new LeaderLookupBatcher(async (leaderId, lookups) => {
    requests.push({ leaderId, lookups });
    if (leaderId === options.failLeader) throw new Error(`broker ${leaderId} disconnected`);
    const answers = new Map<string, LookupAnswer>();
    for (const l of lookups) {
      const key = partitionKey(l.topic, l.partition);
      if (key !== options.leaveOut)
        answers.set(key, { errorCode: 0, offset: BigInt(l.partition * 10), leaderEpoch: 4 });
    }
    return answers;
  });
  return { batcher, requests };
}

const earliest = (topic: string, partition: number): Extract<LeaderLookup, { api: "ListOffsets" }> => ({
  api: "ListOffsets",
  topic,
  partition,
  isolationLevel: 0,
  timestamp: -2n,
});

describe("LeaderLookupBatcher", () => {
  it("sends the lookups of one turn as one request per leader and kind, each answered with its own partition", async () => {
    const { batcher, requests } = recordingBatcher();
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, (_, p) => batcher.lookup(1, earliest("t", p))),
      batcher.lookup(2, earliest("t", 8)),
      batcher.lookup(1, { api: "OffsetsForLeaderEpoch", topic: "t", partition: 3, leaderEpoch: 2 }),
      batcher.lookup(1, { ...earliest("t", 5), isolationLevel: 1, timestamp: -1n }),
    ]);
    expect(answers.map((a) => a.offset)).toEqual([0n, 10n, 20n, 30n, 40n, 50n, 60n, 70n, 80n, 30n, 50n]);
    expect(requests.map((r) => [r.leaderId, r.lookups[0]!.api, r.lookups.length])).toEqual([
      [1, "ListOffsets", 8],
      [2, "ListOffsets", 1],
      [1, "OffsetsForLeaderEpoch", 1],
      [1, "ListOffsets", 1],
    ]);
  });

  it("never puts a partition twice in one request (Kafka refuses duplicates): the second lookup gets its own", async () => {
    const { batcher, requests } = recordingBatcher();
    await Promise.all([
      batcher.lookup(1, earliest("t", 0)),
      batcher.lookup(1, { ...earliest("t", 0), timestamp: -1n }),
      batcher.lookup(1, earliest("t", 1)),
    ]);
    expect(
      requests.map((r) => r.lookups.map((l) => `${l.partition}@${l.api === "ListOffsets" && l.timestamp}`)),
    ).toEqual([["0@-2", "1@-2"], ["0@-1"]]);
  });

  it("starts a new request for lookups made after the last one was sent", async () => {
    const { batcher, requests } = recordingBatcher();
    await batcher.lookup(1, earliest("t", 0));
    await batcher.lookup(1, earliest("t", 1));
    expect(requests).toHaveLength(2);
  });

  it("a failed request rejects its own lookups only; a partition the answer leaves out is UNKNOWN_TOPIC_OR_PARTITION", async () => {
    const { batcher } = recordingBatcher({ failLeader: 2, leaveOut: partitionKey("t", 1) });
    const results = await Promise.allSettled([
      batcher.lookup(1, earliest("t", 0)),
      batcher.lookup(1, earliest("t", 1)),
      batcher.lookup(2, earliest("t", 2)),
      batcher.lookup(2, earliest("t", 3)),
    ]);
    expect(results[0]).toEqual({ status: "fulfilled", value: { errorCode: 0, offset: 0n, leaderEpoch: 4 } });
    expect(results[1]).toEqual({
      status: "fulfilled",
      value: { errorCode: 3, offset: -1n, leaderEpoch: -1 },
    });
    for (const r of results.slice(2)) {
      expect(r.status).toBe("rejected");
      expect(String((r as PromiseRejectedResult).reason)).toContain("broker 2 disconnected");
    }
  });
});
