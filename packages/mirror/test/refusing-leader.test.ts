import { describe, expect, it } from "vitest";
import { leaderChangedSince, refusingLeader } from "../src/coordinator/refusing-leader";
import type { DestinationCluster, LocalReplica } from "../src/ports";

const key = { mirror: "dr", topic: "orders", topicId: "AAAAAAAAAAAAAAAAAAAAAA", partition: 0 };

/**
 * A destination whose metadata names `metadata.leader` at `metadata.leaderEpoch`, and whose brokers' own
 * replicas lead at the epochs in `own` (a broker missing there leads nothing, or is not running).
 */
function destinationWith(metadata: { leader: number; leaderEpoch: number }, own: Map<number, number>) {
  const destination = {
    leaderOf: () => metadata.leader,
    leaderEpochOf: () => metadata.leaderEpoch,
    replica: (brokerId: number) => {
      const epoch = own.get(brokerId);
      return epoch === undefined ? undefined : ({ leaderEpoch: () => epoch } as unknown as LocalReplica);
    },
  };
  return destination as unknown as DestinationCluster;
}

describe("the destination leader that refused a step, as its FAILED waits it out", () => {
  it("lagged: running, its own replica at an older epoch than the metadata's; not when it knows it, or is down", () => {
    const ranOn = { leader: 1, leaderEpoch: 6 };
    const metadata = { leader: 1, leaderEpoch: 6 };
    expect(refusingLeader(destinationWith(metadata, new Map([[1, 5]])), key, ranOn)).toEqual({
      ...ranOn,
      lagged: true,
    });
    expect(refusingLeader(destinationWith(metadata, new Map([[1, 6]])), key, ranOn).lagged).toBe(false);
    expect(refusingLeader(destinationWith(metadata, new Map()), key, ranOn).lagged).toBe(false);
  });

  it("another leader, or a newer epoch in the metadata, ends the wait; the same leader at the same epoch does not", () => {
    const refused = { leader: 1, leaderEpoch: 6, lagged: false };
    const own = new Map([
      [1, 6],
      [2, 7],
    ]);
    expect(leaderChangedSince(destinationWith({ leader: 1, leaderEpoch: 6 }, own), key, refused)).toBe(false);
    expect(leaderChangedSince(destinationWith({ leader: 2, leaderEpoch: 7 }, own), key, refused)).toBe(true);
    expect(leaderChangedSince(destinationWith({ leader: 1, leaderEpoch: 8 }, own), key, refused)).toBe(true);
    // No leader that refused it: the step found none running, which any leader ends.
    expect(leaderChangedSince(destinationWith({ leader: 1, leaderEpoch: 6 }, own), key, undefined)).toBe(
      true,
    );
  });

  it("a lagging leader ends it once its own replica knows the metadata's epoch, not before", () => {
    const refused = { leader: 1, leaderEpoch: 6, lagged: true };
    const metadata = { leader: 1, leaderEpoch: 6 };
    expect(leaderChangedSince(destinationWith(metadata, new Map([[1, 5]])), key, refused)).toBe(false);
    expect(leaderChangedSince(destinationWith(metadata, new Map()), key, refused)).toBe(false);
    expect(leaderChangedSince(destinationWith(metadata, new Map([[1, 6]])), key, refused)).toBe(true);
    // One that knew the epoch when it refused stays refused at it.
    const knew = { ...refused, lagged: false };
    expect(leaderChangedSince(destinationWith(metadata, new Map([[1, 6]])), key, knew)).toBe(false);
  });
});
