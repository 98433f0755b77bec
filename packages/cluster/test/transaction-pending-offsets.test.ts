import { describe, expect, it } from "vitest";
import { clientCluster, eosOffsets } from "./clients-helpers";
import { expectRefused } from "./refusals";

/** A transactional producer "eos-tx" with a transaction begun, on a cluster with topic "in" (2 partitions). */
async function openTransaction(client: Parameters<typeof clientCluster>[1] = {}) {
  const t = clientCluster({}, client);
  t.cluster.controller.createTopic({ name: "in", replicaAssignment: [[0], [1]] });
  const producer = t.kafka.producer({ transactionalId: "eos-tx" });
  await t.run(producer.connect());
  const txn = await t.run(producer.transaction());
  const committed = () =>
    [...t.cluster.groups.fetchOffsets("eos")]
      .map(([tp, { offset }]) => [tp, offset] as const)
      .sort(([a], [b]) => a.localeCompare(b));
  return { ...t, producer, txn, committed };
}

describe("offsets a transaction sent, pending until it ends (Kafka's pending transactional offsets)", () => {
  it("are dropped for a topic deleted before the commit, even if created again under its name", async () => {
    const { cluster, run, txn, committed } = await openTransaction();
    cluster.controller.createTopic({ name: "doomed", replicaAssignment: [[0]] });
    await run(txn.sendOffsets(eosOffsets({ in: [[0, "4"]], doomed: [[0, "9"]] })));
    // Kafka's OffsetMetadataManager.onPartitionsDeleted tombstones the pending offsets of deleted partitions.
    cluster.controller.deleteTopic("doomed");
    cluster.controller.createTopic({ name: "doomed", replicaAssignment: [[1]] });
    await run(txn.commit());
    // Before: "doomed:0" was stored at 9, an offset of the deleted topic the new one's readers resumed from.
    expect(committed()).toEqual([["in:0", 4n]]);
  });

  it("commit though the principal lost READ on their topic after they were sent (not authorized again)", async () => {
    const t = clientCluster({ authorizer: { enabled: true, superUsers: ["User:ANONYMOUS"] } });
    t.cluster.controller.createTopic({ name: "in", replicaAssignment: [[0]] });
    const acl = (
      resourceType: "GROUP" | "TOPIC" | "TRANSACTIONAL_ID",
      resourceName: string,
      operation: "READ" | "WRITE",
    ) =>
      ({
        resourceType,
        resourceName,
        patternType: "LITERAL",
        principal: "User:alice",
        host: "*",
        operation,
        permissionType: "ALLOW",
      }) as const;
    t.cluster.authorizer.createAcls([
      acl("GROUP", "eos", "READ"),
      acl("TOPIC", "in", "READ"),
      acl("TRANSACTIONAL_ID", "eos-tx", "WRITE"),
    ]);
    const producer = t
      .as({ clientId: "alice", principal: "User:alice" })
      .producer({ transactionalId: "eos-tx" });
    await t.run(producer.connect());
    const txn = await t.run(producer.transaction());
    await t.run(txn.sendOffsets(eosOffsets({ in: [[0, "4"]] })));
    t.cluster.authorizer.deleteAcls([acl("TOPIC", "in", "READ")]);
    await t.run(txn.commit());
    expect(t.cluster.groups.fetchOffsets("eos").get("in:0")?.offset).toBe(4n);
  });

  it("sent twice for one partition keep the later offset", async () => {
    const { run, txn, committed } = await openTransaction();
    await run(
      txn.sendOffsets(
        eosOffsets({
          in: [
            [0, "4"],
            [1, "2"],
          ],
        }),
      ),
    );
    await run(txn.sendOffsets(eosOffsets({ in: [[0, "3"]] })));
    await run(txn.commit());
    expect(committed()).toEqual([
      ["in:0", 3n],
      ["in:1", 2n],
    ]);
  });

  it("cannot be sent once the transaction aborted, and are not carried into the next one", async () => {
    const { run, producer, txn, committed } = await openTransaction();
    await run(txn.sendOffsets(eosOffsets({ in: [[0, "4"]] })));
    await run(txn.abort());
    await expectRefused(
      run(txn.sendOffsets(eosOffsets({ in: [[1, "5"]] }))),
      "INVALID_TXN_STATE",
      /this transaction has ended; begin a new one with producer.transaction\(\)/,
    );
    const next = await run(producer.transaction());
    await run(next.commit());
    expect(committed()).toEqual([]);
  });

  it("are refused when a retry outlives the transaction: abort while sendOffsets retries is INVALID_TXN_STATE", async () => {
    const { cluster, run, producer, txn, committed, scheduler } = await openTransaction({
      retry: { retries: 5, initialRetryTime: 100, factor: 0 },
    });
    // "late" appears after the abort: sendOffsets is still retrying on UNKNOWN_TOPIC_OR_PARTITION then.
    scheduler.schedule(() => cluster.controller.createTopic({ name: "late", replicaAssignment: [[0]] }), 500);
    const sent = txn.sendOffsets(eosOffsets({ late: [[0, "7"]] })).then(
      () => "resolved",
      (error: { errorName?: string; message?: string }) => error,
    );
    await run(txn.abort());
    const outcome = await run(sent);
    // Before: it resolved, as if the offsets were in a transaction (Kafka's TxnOffsetCommit verification
    // answers an old client INVALID_TXN_STATE for a transaction that is not ongoing; kafkajs does not retry it).
    expect(outcome).toMatchObject({ errorName: "INVALID_TXN_STATE" });
    expect((outcome as { message: string }).message).toMatch(
      /^transaction\.sendOffsets\(args\): the transaction of 'eos-tx' ended while sendOffsets was retrying 1 refused offset\(s\): they are in no transaction\. Send them again in a new one \(producer\.transaction\(\)\)$/,
    );
    const next = await run(producer.transaction());
    await run(next.commit());
    expect(committed()).toEqual([]);
  });

  it("are refused to a fenced producer: sendOffsets is PRODUCER_FENCED, as kafkajs's AddOffsetsToTxn is", async () => {
    const { kafka, run, txn, committed } = await openTransaction();
    const fresh = kafka.producer({ transactionalId: "eos-tx" });
    await run(fresh.connect());
    await run(fresh.transaction()); // InitProducerId: a newer epoch fences "eos-tx"'s first producer
    // Before: taken, and stored in the group by the zombie's commit (no EndTxn for an offsets-only transaction).
    await expectRefused(
      run(txn.sendOffsets(eosOffsets({ in: [[0, "4"]] }))),
      "PRODUCER_FENCED",
      /^producer \d+ epoch 0 was fenced by epoch 1 of 'eos-tx'; close this producer$/,
    );
    await expectRefused(run(txn.commit()), "PRODUCER_FENCED", /was fenced/);
    expect(committed()).toEqual([]);
  });

  it("are aborted with a transaction fenced after they were sent: its commit is PRODUCER_FENCED, nothing stored", async () => {
    const { kafka, run, txn, committed } = await openTransaction();
    await run(txn.sendOffsets(eosOffsets({ in: [[0, "4"]] })));
    const fresh = kafka.producer({ transactionalId: "eos-tx" });
    await run(fresh.connect());
    await run(fresh.transaction()); // InitProducerId aborts the first producer's ongoing transaction
    // Before: the offsets-only transaction committed its offsets, the coordinator never having heard of it.
    await expectRefused(run(txn.commit()), "PRODUCER_FENCED", /was fenced/);
    expect(committed()).toEqual([]);
  });

  it("commit though the group's generation moved on after they were sent: it is checked when they are", async () => {
    const { kafka, run, producer, txn, committed } = await openTransaction();
    const { handler, request } = kafka.context;
    const first = handler.joinGroup(request, { groupId: "eos", topics: ["in"] });
    const member = { memberId: first.memberId, generationId: first.generationId };
    await run(txn.sendOffsets({ ...eosOffsets({ in: [[0, "4"]] }), consumer: member }));
    handler.joinGroup(request, { groupId: "eos", topics: ["in"] }); // a rebalance: generation 2
    // Before: commit threw ILLEGAL_GENERATION after EndTxn had committed the transaction; the offsets were
    // lost and the transaction stayed open, so the producer could begin no other.
    await run(txn.commit());
    expect(committed()).toEqual([["in:0", 4n]]);
    const next = await run(producer.transaction());
    // A member of a stale generation is refused when it sends, and nothing is added.
    await expectRefused(
      run(next.sendOffsets({ ...eosOffsets({ in: [[1, "5"]] }), consumer: member })),
      "ILLEGAL_GENERATION",
      /^generation 1 of group 'eos' is stale \(now 2\); rejoin$/,
    );
    await run(next.commit());
    expect(committed()).toEqual([["in:0", 4n]]);
  });

  it("lose to an offset committed or deleted after they were sent: Kafka keeps the most recent write", async () => {
    const { kafka, run, txn, committed } = await openTransaction();
    const admin = kafka.admin();
    const setOffset = (partition: number, offset: string) =>
      run(admin.setOffsets({ groupId: "eos", topic: "in", partitions: [{ partition, offset }] }));
    await setOffset(1, "1"); // before they are sent: the transaction's offset replaces it
    await run(
      txn.sendOffsets(
        eosOffsets({
          in: [
            [0, "4"],
            [1, "2"],
          ],
        }),
      ),
    );
    await setOffset(0, "10");
    // Before: the commit stored 4 over the later 10, rewinding the group.
    await run(txn.commit());
    expect(committed()).toEqual([
      ["in:0", 10n],
      ["in:1", 2n],
    ]);
    // An offset deleted after it was sent (a tombstone) is not brought back by the commit.
    const second = kafka.producer({ transactionalId: "eos-tx-2" });
    await run(second.connect());
    const next = await run(second.transaction());
    await run(next.sendOffsets(eosOffsets({ in: [[1, "6"]] })));
    kafka.context.cluster.groups.deleteOffsets("eos", [{ topic: "in", partition: 1 }]);
    await run(next.commit());
    expect(committed()).toEqual([["in:0", 10n]]);
  });
});
