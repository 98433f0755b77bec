import { describe, expect, it } from "vitest";
import type { DestinationCluster, LocalReplica } from "../src/ports";
import { flush } from "./core-helpers";
import { executorOver, recordingPartition } from "./executor-helpers";

/** A destination whose topic `orders` now has `topicId` (undefined: deleted), led by a recording replica. */
function destination(topicId: string | undefined) {
  const appended: Buffer[] = [];
  const replica = {
    topic: "orders",
    partition: 0,
    logEndOffset: () => BigInt(appended.length),
    endsWithPidResetAbove: () => false,
    ongoingTransactions: () => [],
    appendControlBatch: (b: Buffer) => appended.push(b),
    awaitReplicated: async () => undefined,
    setReadOnly: () => undefined,
  } as unknown as LocalReplica;
  const dest: Partial<DestinationCluster> = {
    clusterId: "destination",
    leaderOf: () => 0,
    leaderEpochOf: () => 0,
    replica: () => replica,
    topicIdOf: () => topicId,
  };
  return { dest, appended };
}

describe("effect executor: a mirror partition's steps write only to its own topic", () => {
  // recordingPartition's key has topic id AAAAAAAAAAAAAAAAAAAAAA.
  it("writes the barrier while the topic of that name is the partition's", async () => {
    const { dest, appended } = destination("AAAAAAAAAAAAAAAAAAAAAA");
    const p = recordingPartition("orders", 0);
    executorOver(dest).run(p.runtime, { type: "appendPidReset", params: { stateEpoch: 3, lme: 1 } });
    await flush();
    expect(p.events).toEqual([{ type: "PID_RESET_APPENDED", stateEpoch: 3 }]);
    expect(appended).toHaveLength(1);
  });

  for (const [what, now] of [
    ["created again under the name", "BBBBBBBBBBBBBBBBBBBBBB"],
    ["deleted", undefined],
  ] as const) {
    it(`fails for good, writing nothing, once the topic was ${what}`, async () => {
      const { dest, appended } = destination(now);
      const p = recordingPartition("orders", 0);
      const executor = executorOver(dest);
      executor.run(p.runtime, { type: "appendPidReset", params: { stateEpoch: 3, lme: 1 } });
      executor.run(p.runtime, { type: "abortOpenTransactions", params: { stateEpoch: 3 } });
      executor.run(p.runtime, { type: "markReadOnly", params: { stateEpoch: 3 } });
      await flush();
      expect(appended).toHaveLength(0);
      expect(p.events).toHaveLength(3);
      for (const e of p.events) {
        expect(e).toMatchObject({ type: "EFFECT_FAILED", stateEpoch: 3, retryable: false });
        const message = (e as { message: string }).message;
        expect(message).toContain("the destination topic (id AAAAAAAAAAAAAAAAAAAAAA) was deleted");
        if (now) expect(message).toContain(`is now another topic (id ${now})`);
      }
    });
  }
});
