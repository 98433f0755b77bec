import { ClusterError } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { DestinationLeaderReplica } from "../src/coordinator/destination-leader-replica";
import {
  leaderMovedOnDestination,
  NoDestinationLeaderError,
} from "../src/coordinator/no-destination-leader-error";
import type { LocalReplica } from "../src/ports";

describe("a destination leader replica that stops leading in the middle of a step", () => {
  it("NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH become a NoDestinationLeaderError, name and message kept", () => {
    for (const name of ["NOT_LEADER_OR_FOLLOWER", "FENCED_LEADER_EPOCH"] as const) {
      const original = new ClusterError(name, `broker 0 stopped leading orders-0 (${name})`);
      const moved = leaderMovedOnDestination(original);
      expect(moved).toBeInstanceOf(NoDestinationLeaderError);
      expect(moved).toMatchObject({
        errorName: name,
        message: original.message,
        retriable: true,
        cause: original,
      });
    }
  });

  it("names the leader the step ran on; a step that found no running leader names none", () => {
    const ranOn = { leader: 2, leaderEpoch: 7 };
    const moved = leaderMovedOnDestination(new ClusterError("NOT_LEADER_OR_FOLLOWER", "not leader"), ranOn);
    expect(moved).toMatchObject({ ranOn });
    expect(new NoDestinationLeaderError("orders-0 has no running leader").ranOn).toBeUndefined();
  });

  it("any other error stays as it is", () => {
    const storage = new ClusterError("KAFKA_STORAGE_ERROR", "disk full");
    const plain = new Error("boom");
    expect(leaderMovedOnDestination(storage)).toBe(storage);
    expect(leaderMovedOnDestination(plain)).toBe(plain);
    expect(leaderMovedOnDestination("text")).toBe("text");
  });

  it("the replica's calls throw it, and its replication wait rejects with it", async () => {
    const notLeader = () => new ClusterError("NOT_LEADER_OR_FOLLOWER", "broker 0 is not running");
    const replica = {
      topic: "orders",
      partition: 0,
      logEndOffset: () => {
        throw notLeader();
      },
      awaitReplicated: () => Promise.reject(notLeader()),
      highWatermark: () => 7n,
    } as unknown as LocalReplica;
    const guarded = new DestinationLeaderReplica(replica);
    expect(() => guarded.logEndOffset()).toThrow(NoDestinationLeaderError);
    await expect(guarded.awaitReplicated(3n)).rejects.toBeInstanceOf(NoDestinationLeaderError);
    expect(guarded.highWatermark()).toBe(7n);
    expect([guarded.topic, guarded.partition]).toEqual(["orders", 0]);
  });
});
