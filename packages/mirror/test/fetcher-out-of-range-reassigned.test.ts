import { describe, expect, it, vi } from "vitest";
import type { SourceCluster } from "../src/ports";
import { bind, drive, leaderLog, mirrorEnv, produce, TOPIC, valuesBatch } from "./data-helpers";

/**
 * A source as Apache Kafka answers OFFSET_OUT_OF_RANGE (no log start, no high watermark in the answer:
 * `createLogReadResult(e)`), whose ListOffsets for the log start is answered only when the test says so.
 */
function slowLogStartSource(s: SourceCluster) {
  const pending: (() => void)[] = [];
  const source: SourceCluster = {
    ...bind(s),
    fetch: async (request) => {
      const response = await s.fetch(request);
      return {
        ...response,
        partitions: response.partitions.map((p) =>
          p.error?.errorName === "OFFSET_OUT_OF_RANGE"
            ? { ...p, logStartOffset: -1n, highWatermark: -1n }
            : p,
        ),
      };
    },
    listOffsets: (topic, partition, timestamp, topicId) => {
      if (timestamp !== -2n) return s.listOffsets(topic, partition, timestamp, topicId);
      return new Promise((resolve, reject) =>
        pending.push(() => s.listOffsets(topic, partition, timestamp, topicId).then(resolve, reject)),
      );
    },
  };
  return { source, pending };
}

describe("OFFSET_OUT_OF_RANGE while the partition is removed and added again", () => {
  it("the first assignment's late truncation neither truncates nor lets the second one's run twice", async () => {
    let slow: ReturnType<typeof slowLogStartSource> | undefined;
    const env = mirrorEnv({
      wrapSource: (s) => {
        slow = slowLogStartSource(s);
        return slow.source;
      },
    });
    const { pending } = slow!;
    for (let i = 0; i < 5; i++) await produce(env, valuesBatch([`a${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(leaderLog(env.destination).logEndOffset).toBe(5n);

    // Paused: the source goes on, and its log start passes the copy's end.
    const paused = env.manager.removePartition(env.key());
    await drive(env, 100);
    await paused;
    for (let i = 0; i < 5; i++) await produce(env, valuesBatch([`b${i}`]));
    env.source.leaderFor(TOPIC, 0).deleteRecords(TOPIC, 0, 8n);

    const log = leaderLog(env.destination);
    const fullTruncations: bigint[] = [];
    const truncateFully = log.truncateFullyAndStartAt.bind(log);
    vi.spyOn(log, "truncateFullyAndStartAt").mockImplementation((offset) => {
      fullTruncations.push(log.logEndOffset);
      truncateFully(offset);
    });

    // Resumed: OFFSET_OUT_OF_RANGE, and the fetcher asks the source where its log starts (no answer yet).
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(pending).toHaveLength(1);
    // Paused and resumed again meanwhile: the new assignment meets OFFSET_OUT_OF_RANGE too, and asks again.
    const pausedAgain = env.manager.removePartition(env.key());
    await drive(env, 100);
    await pausedAgain;
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(pending).toHaveLength(2);

    // The first assignment's answer comes: it belongs to nobody now. Then the current one's. Before: the
    // first one's completion told the fetcher the current assignment's truncation was done; it fetched
    // again, met the same OFFSET_OUT_OF_RANGE and asked again beside the pending truncation, which then
    // emptied the log once more after offsets 8-9 were mirrored (and committed).
    while (pending.length > 0) {
      pending.shift()!();
      await drive(env, 1000);
    }
    expect(fullTruncations).toEqual([5n]);
    expect([log.logStartOffset, log.logEndOffset, log.highWatermark]).toEqual([8n, 10n, 10n]);
    expect(env.events.failures).toEqual([]);
  });
});
