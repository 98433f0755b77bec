import type { AclBinding, Producer, Transaction } from "@cluster-mirror/cluster";
import type { NodeCluster } from "../node/mirror-node";

/** The demo's topics on the primary, with partition counts and dynamic configs. */
export const DEMO_TOPICS = [
  { topic: "orders", partitions: 3, configs: { "retention.ms": "604800000", "segment.bytes": "1048576" } },
  { topic: "payments", partitions: 2, configs: { "retention.ms": "2592000000", "cleanup.policy": "delete" } },
] as const;

/** The consumer group that commits offsets on the primary. */
export const DEMO_GROUP = "billing";

/** ACLs on the primary: literal topic and group rules, the kind a mirror syncs. */
export const DEMO_ACLS: AclBinding[] = [
  acl("TOPIC", "orders", "User:alice", "READ"),
  acl("TOPIC", "orders", "User:alice", "DESCRIBE"),
  acl("TOPIC", "payments", "User:bob", "WRITE"),
  acl("GROUP", DEMO_GROUP, "User:alice", "READ"),
];

/** What the workload left behind. */
export interface Workload {
  ordersSent: number;
  committedTxnRecords: number;
  abortedTxnRecords: number;
  /** The transaction left open on the primary (its producer and id), aborted by the failover on dr. */
  open: { producer: Producer; txn: Transaction; producerId: bigint };
  groupCommitted: number;
}

/**
 * Creates the topics and ACLs on the primary and runs the workload: keyed idempotent writes to `orders`,
 * three transactions on `payments` (one committed, one aborted, one left open) and the `billing` group
 * consuming `orders` and committing its offsets (then leaving, so the group is Empty and its offsets sync).
 */
export async function runWorkload(primary: NodeCluster, orders: number): Promise<Workload> {
  const admin = primary.kafka.admin();
  await admin.createTopics({
    topics: DEMO_TOPICS.map((t) => ({
      topic: t.topic,
      numPartitions: t.partitions,
      replicationFactor: 3,
      configEntries: Object.entries(t.configs).map(([name, value]) => ({ name, value })),
    })),
  });
  primary.cluster.authorizer.createAcls(DEMO_ACLS);

  const producer = primary.kafka.producer({ idempotent: true });
  await producer.connect();
  await sendOrders(producer, 0, orders);

  const txn = async (id: string, values: string[], outcome: "commit" | "abort" | "open") => {
    const p = primary.kafka.producer({ transactionalId: id, transactionTimeout: 900_000 });
    await p.connect();
    const t = await p.transaction();
    await t.send({ topic: "payments", messages: values.map((value, i) => ({ key: `${id}-${i}`, value })) });
    if (outcome === "commit") await t.commit();
    if (outcome === "abort") await t.abort();
    return { producer: p, txn: t, producerId: p.producerId()?.producerId ?? -1n };
  };
  await txn("payments-tx-1", ["pay 10", "pay 20", "pay 30"], "commit");
  await txn("payments-tx-2", ["pay 40", "pay 50"], "abort");
  const open = await txn("payments-tx-3", ["pay 60", "pay 70"], "open");

  const consumer = primary.kafka.consumer({ groupId: DEMO_GROUP, isolation: "read_committed" });
  await consumer.connect();
  await consumer.subscribe({ topic: "orders", fromBeginning: true });
  let consumed = 0;
  const target = Math.floor(orders * 0.6);
  for (let round = 0; round < 200 && consumed < target; round++) consumed += (await consumer.poll()).length;
  await consumer.commitOffsets();
  await consumer.disconnect();
  await producer.disconnect();
  return { ordersSent: orders, committedTxnRecords: 3, abortedTxnRecords: 2, open, groupCommitted: consumed };
}

/** Sends `count` keyed orders starting at number `from`, in batches of 50. */
export async function sendOrders(producer: Producer, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i += 50) {
    const n = Math.min(50, from + count - i);
    await producer.send({
      topic: "orders",
      messages: Array.from({ length: n }, (_, j) => ({
        key: `customer-${(i + j) % 17}`,
        value: `order ${i + j}`,
      })),
      acks: -1,
    });
  }
}

function acl(
  resourceType: AclBinding["resourceType"],
  resourceName: string,
  principal: string,
  operation: AclBinding["operation"],
): AclBinding {
  return {
    resourceType,
    resourceName,
    patternType: "LITERAL",
    principal,
    host: "*",
    operation,
    permissionType: "ALLOW",
  };
}
