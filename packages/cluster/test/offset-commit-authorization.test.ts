import { describe, expect, it } from "vitest";
import type { AclBinding, AclOperation, AclResourceType } from "../src/index";
import { clientCluster } from "./clients-helpers";
import { expectRefused } from "./refusals";

const allow = (resourceType: AclResourceType, resourceName: string, operation: AclOperation): AclBinding => ({
  resourceType,
  resourceName,
  patternType: "LITERAL",
  principal: "User:alice",
  host: "*",
  operation,
  permissionType: "ALLOW",
});

/**
 * Topics "a" and "b" (one partition each); alice may read group "g" and topic "a", and `also`. The
 * cluster's default client (`kafka`, User:ANONYMOUS) is a super user.
 */
function aclCluster(also: AclBinding[] = []) {
  const t = clientCluster({ authorizer: { enabled: true, superUsers: ["User:ANONYMOUS"] } });
  t.cluster.controller.createTopic({ name: "a", replicaAssignment: [[0]] });
  t.cluster.controller.createTopic({ name: "b", replicaAssignment: [[1]] });
  t.cluster.authorizer.createAcls([allow("GROUP", "g", "READ"), allow("TOPIC", "a", "READ"), ...also]);
  const alice = t.as({ clientId: "alice", principal: "User:alice" });
  const committed = () =>
    [...t.cluster.groups.fetchOffsets("g")].map(([tp, { offset }]) => [tp, offset] as const);
  return { ...t, alice, committed };
}

describe("an offset commit with a topic the principal may not READ, as Kafka's OffsetCommit answers it", () => {
  it("refuses that topic's offsets with TOPIC_AUTHORIZATION_FAILED and commits the others", async () => {
    const { alice, run, committed } = aclCluster();
    const consumer = alice.consumer({ groupId: "g" });
    await run(consumer.connect());
    // Before: the whole commit was refused, "a" too.
    await expectRefused(
      run(
        consumer.commitOffsets([
          { topic: "a", partition: 0, offset: "3" },
          { topic: "b", partition: 0, offset: "5" },
        ]),
      ),
      "TOPIC_AUTHORIZATION_FAILED",
      /^User:alice may not READ TOPIC 'b'; an ALLOW ACL for that operation \(and no DENY\) is needed: group 'g' keeps no offset for it \(1 offset\(s\) of topics the principal may not READ; the other 1 offset\(s\) were committed\)$/,
    );
    expect(committed()).toEqual([["a:0", 3n]]);
  });

  it("answers in the response's order, per topic as kafkajs sends them: the first refused offset's error is thrown", async () => {
    const { alice, run, committed } = aclCluster();
    const consumer = alice.consumer({ groupId: "g" });
    await run(consumer.connect());
    // kafkajs groups by topic: "a" (partition 4 unknown) comes before "b" (not authorized) in the response.
    await expectRefused(
      run(
        consumer.commitOffsets([
          { topic: "a", partition: 0, offset: "1" },
          { topic: "b", partition: 0, offset: "2" },
          { topic: "a", partition: 4, offset: "3" },
        ]),
      ),
      "UNKNOWN_TOPIC_OR_PARTITION",
      /^topic 'a' has partitions 0 to 0; partition 4 does not exist: group 'g' keeps no offset for it \(1 offset\(s\) of partitions the cluster does not have, 1 offset\(s\) of topics the principal may not READ; the other 1 offset\(s\) were committed\)\. Commit offsets of existing partitions only$/,
    );
    expect(committed()).toEqual([["a:0", 1n]]);
  });

  it("still refuses the whole commit without READ on the group", async () => {
    const { alice, run, committed, cluster } = aclCluster();
    const consumer = alice.consumer({ groupId: "g" });
    await run(consumer.connect());
    cluster.authorizer.deleteAcls([allow("GROUP", "g", "READ")]);
    await expectRefused(
      run(consumer.commitOffsets([{ topic: "a", partition: 0, offset: "3" }])),
      "GROUP_AUTHORIZATION_FAILED",
      /^User:alice may not READ GROUP 'g'/,
    );
    expect(committed()).toEqual([]);
  });

  it("auto-commit commits the readable topics' offsets before the consumer crashes on the refused one", async () => {
    const { alice, run, committed, cluster, kafka } = aclCluster([allow("TOPIC", "b", "READ")]);
    const producer = kafka.producer();
    await run(producer.connect());
    await run(producer.send({ topic: "a", messages: [{ value: "a1" }] }));
    await run(producer.send({ topic: "b", messages: [{ value: "b1" }] }));
    const consumer = alice.consumer({ groupId: "g" });
    await run(consumer.connect());
    await run(consumer.subscribe({ topics: ["a", "b"], fromBeginning: true }));
    const crashed = new Promise<unknown>((resolve) => {
      consumer.on(consumer.events.CRASH, (event) => resolve(event.payload.error));
    });
    const seen: string[] = [];
    await run(
      consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(String(message.value));
          // READ on "b" is revoked while the round is processed: its auto-commit carries an offset for "b".
          if (seen.length === 2) cluster.authorizer.deleteAcls([allow("TOPIC", "b", "READ")]);
        },
      }),
    );
    const error = (await run(crashed)) as { errorName?: string };
    expect(seen).toEqual(["a1", "b1"]);
    expect(error.errorName).toBe("TOPIC_AUTHORIZATION_FAILED");
    // Before: nothing was committed, "a" was read again by the group's next member.
    expect(committed()).toEqual([["a:0", 1n]]);
  });
});

describe("transaction.sendOffsets with a topic the principal may not READ, as Kafka's TxnOffsetCommit answers it", () => {
  it("refuses that topic's offsets at once; the others commit with the transaction", async () => {
    const { alice, run, committed, clock } = aclCluster([allow("TRANSACTIONAL_ID", "eos-tx", "WRITE")]);
    const producer = alice.producer({ transactionalId: "eos-tx" });
    await run(producer.connect());
    const txn = await run(producer.transaction());
    const before = clock.now();
    await expectRefused(
      run(
        txn.sendOffsets({
          consumerGroupId: "g",
          topics: [
            { topic: "b", partitions: [{ partition: 0, offset: "5" }] },
            { topic: "a", partitions: [{ partition: 0, offset: "3" }] },
          ],
        }),
      ),
      "TOPIC_AUTHORIZATION_FAILED",
      /^transaction\.sendOffsets\(args\): User:alice may not READ TOPIC 'b'; .*: group 'g' gets no offset for it \(1 offset\(s\) of topics the principal may not READ; the other 1 offset\(s\) were added and commit with the transaction\)$/,
    );
    // kafkajs's eosManager retries only UNKNOWN_TOPIC_OR_PARTITION and coordinator errors: no backoff here.
    expect(clock.now()).toBe(before);
    // Before: sendOffsets took both, and commit (after EndTxn) threw TOPIC_AUTHORIZATION_FAILED, storing none.
    await run(txn.commit());
    expect(committed()).toEqual([["a:0", 3n]]);
  });

  it("still refuses the whole call without READ on the group, and the transaction commits without offsets", async () => {
    const { alice, run, committed, cluster } = aclCluster([allow("TRANSACTIONAL_ID", "eos-tx", "WRITE")]);
    cluster.authorizer.deleteAcls([allow("GROUP", "g", "READ")]);
    const producer = alice.producer({ transactionalId: "eos-tx" });
    await run(producer.connect());
    const txn = await run(producer.transaction());
    await expectRefused(
      run(
        txn.sendOffsets({
          consumerGroupId: "g",
          topics: [{ topic: "a", partitions: [{ partition: 0, offset: "3" }] }],
        }),
      ),
      "GROUP_AUTHORIZATION_FAILED",
      /^User:alice may not READ GROUP 'g'/,
    );
    await run(txn.commit());
    expect(committed()).toEqual([]);
  });
});

describe("admin offsets (AlterConsumerGroupOffsets) with a topic the principal may not READ, as Kafka's OffsetCommit answers it", () => {
  it("refuses that topic's offsets with TOPIC_AUTHORIZATION_FAILED and sets the others", async () => {
    const { alice, committed } = aclCluster();
    const { handler, request } = alice.context;
    // kafkajs's admin.setOffsets names one topic; Kafka's admin client may name several in one request.
    // Before: the whole request was refused, "a" too.
    await expectRefused(
      Promise.resolve().then(() =>
        handler.alterGroupOffsets(request, "g", [
          { topic: "b", partition: 0, offset: 5n },
          { topic: "a", partition: 0, offset: 3n },
        ]),
      ),
      "TOPIC_AUTHORIZATION_FAILED",
      /^User:alice may not READ TOPIC 'b'; an ALLOW ACL for that operation \(and no DENY\) is needed: group 'g' keeps no offset for it \(1 offset\(s\) of topics the principal may not READ; the other 1 offset\(s\) were set\)$/,
    );
    expect(committed()).toEqual([["a:0", 3n]]);
  });

  it("admin.setOffsets sets the existing partitions' offsets and refuses the missing one's", async () => {
    const { alice, run, committed } = aclCluster();
    const admin = alice.admin();
    // Before: nothing was set. (kafkajs's setOffsets, a consumer seeking, skips a partition it was not
    // assigned and commits the others; here the partition's refusal is thrown, as Kafka's OffsetCommit.)
    await expectRefused(
      run(
        admin.setOffsets({
          groupId: "g",
          topic: "a",
          partitions: [
            { partition: 0, offset: "7" },
            { partition: 4, offset: "1" },
          ],
        }),
      ),
      "UNKNOWN_TOPIC_OR_PARTITION",
      /^topic 'a' has partitions 0 to 0; partition 4 does not exist: group 'g' keeps no offset for it \(1 offset\(s\) of partitions the cluster does not have; the other 1 offset\(s\) were set\)\. Set offsets of existing partitions only$/,
    );
    expect(committed()).toEqual([["a:0", 7n]]);
    // A topic without READ is still refused whole: it is the only topic of the call.
    await expectRefused(
      run(admin.setOffsets({ groupId: "g", topic: "b", partitions: [{ partition: 0, offset: "2" }] })),
      "TOPIC_AUTHORIZATION_FAILED",
      /^User:alice may not READ TOPIC 'b'; .*: group 'g' keeps no offset for it \(1 offset\(s\) of topics the principal may not READ; nothing was set\)$/,
    );
    expect(committed()).toEqual([["a:0", 7n]]);
  });
});
