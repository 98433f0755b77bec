import { describe, expect, it } from "vitest";
import type { SourceCluster } from "../src/ports";
import { batchBytes, bind, drive, leaderLog, mirrorEnv, produce, valuesBatch } from "./data-helpers";

describe("a fetch answered after the destination log moved", () => {
  it("is dropped and asked again from the log end, so no gap is stored (Kafka's follower rule)", async () => {
    let truncateOnFetchFrom: bigint | undefined;
    const env = mirrorEnv({
      wrapSource: (s): SourceCluster => ({
        ...bind(s),
        fetch: async (request) => {
          const answer = await s.fetch(request);
          // While this fetch was in flight the destination log was cut back (a truncation the fetcher
          // did not ask for): its answer starts above the log end now.
          if (request.partitions[0]?.fetchOffset === truncateOnFetchFrom) {
            truncateOnFetchFrom = undefined;
            leaderLog(env.destination).truncateTo(1n);
          }
          return answer;
        },
      }),
    });
    for (const v of ["a", "b", "c"]) await produce(env, valuesBatch([v]));
    env.manager.addPartition(env.key());
    await drive(env, 2_000);
    expect(leaderLog(env.destination).logEndOffset).toBe(3n);
    truncateOnFetchFrom = 3n;
    for (const v of ["d", "e"]) await produce(env, valuesBatch([v]));
    await drive(env, 5_000);
    expect(truncateOnFetchFrom).toBeUndefined();
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(env.events.failures).toEqual([]);
  });
});
