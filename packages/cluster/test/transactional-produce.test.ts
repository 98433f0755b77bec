import { describe, expect, it } from "vitest";
import type { ClusterError } from "../src/index";
import { batch, testCluster } from "./helpers";

/** The error `produce` rejects with. */
async function refusal(produced: Promise<unknown>): Promise<ClusterError> {
  try {
    await produced;
  } catch (error) {
    return error as ClusterError;
  }
  throw new Error("the produce was accepted");
}

const TXN_BATCH = batch(["t"], { producerId: 3n, producerEpoch: 0, baseSequence: 0, isTransactional: true });

describe("a transactional batch needs its transactional id (Kafka's KafkaApis.handleProduceRequest)", () => {
  it("is refused with TRANSACTIONAL_ID_AUTHORIZATION_FAILED without one, and nothing is appended", async () => {
    const { cluster, settle } = testCluster({ brokers: 1 });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
    settle();
    const leader = cluster.leaderFor("t", 0);
    const error = await refusal(leader.produce({ topic: "t", partition: 0, batch: TXN_BATCH, acks: 1 }));
    expect(error.errorName).toBe("TRANSACTIONAL_ID_AUTHORIZATION_FAILED");
    expect(error.message).toMatch(/names no transactional id/);
    expect(leader.replica("t", 0)!.log.logEndOffset).toBe(0n);
    expect(leader.replica("t", 0)!.log.ongoingTransactions()).toEqual([]);
    // An idempotent batch without one is fine.
    const idempotent = batch(["i"], { producerId: 4n, producerEpoch: 0, baseSequence: 0 });
    expect((await leader.produce({ topic: "t", partition: 0, batch: idempotent, acks: 1 })).baseOffset).toBe(
      0n,
    );
    cluster.close();
  });

  it("needs WRITE on the transactional id too", async () => {
    const { cluster, settle } = testCluster({ brokers: 1, authorizer: { enabled: true } });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
    settle();
    cluster.authorizer.createAcls([
      {
        resourceType: "TOPIC",
        resourceName: "t",
        patternType: "LITERAL",
        principal: "User:alice",
        host: "*",
        operation: "WRITE",
        permissionType: "ALLOW",
      },
    ]);
    const leader = cluster.leaderFor("t", 0);
    const request = { topic: "t", partition: 0, batch: TXN_BATCH, acks: 1, principal: "User:alice" };
    const error = await refusal(leader.produce({ ...request, transactionalId: "orders-app" }));
    expect(error.errorName).toBe("TRANSACTIONAL_ID_AUTHORIZATION_FAILED");
    expect(error.message).toMatch(/TRANSACTIONAL_ID 'orders-app'/);
    expect(leader.replica("t", 0)!.log.logEndOffset).toBe(0n);
    cluster.close();
  });
});
