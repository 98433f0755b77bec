import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import { topology } from "./helpers";

/**
 * Helpers of the scenarios where a re-add or failback is removed again while PREPARING, and of what its
 * failover does to the topic's transactions (readd-cancel-transactions, failback-cut-transactions,
 * held-txn-markers-cut).
 */

export type Topology = ReturnType<typeof topology>;
export type Node = ReturnType<Topology["node"]>;
export type Broker = ReturnType<Node["cluster"]["leaderFor"]>;

/** Serves `name`'s mirroring as a source whose LME lookups wait for `gate` (a slow source). */
export function holdLmeLookups(t: Topology, name: string, gate: () => Promise<void>): void {
  const served = t.node(name).mirroring.asSource();
  t.registry.unregister(`${name}:9092`);
  t.registry.register(`${name}:9092`, t.node(name).cluster, {
    ...served,
    lastMirrorEpoch: async (topicId, partition) => {
      await gate();
      return served.lastMirrorEpoch!(topicId, partition);
    },
  });
}

/** A gate: while closed, `wait()` does not resolve. */
export function gate() {
  let held: Promise<void> = Promise.resolve();
  let release = () => {};
  return {
    wait: () => held,
    close() {
      held = new Promise((resolve) => {
        release = resolve;
      });
    },
    open: () => release(),
  };
}

let groups = 0;

/** `offset:value` of every record a consumer of `node` reads in `topic` (partition 0) from the beginning. */
export async function read(
  t: Topology,
  node: Node,
  topic: string,
  isolation: "read_committed" | "read_uncommitted",
): Promise<string[]> {
  const consumer = node.kafka.consumer({ groupId: `audit-${isolation}-${++groups}`, isolation });
  await t.run(consumer.connect());
  await t.run(consumer.subscribe({ topic, fromBeginning: true }));
  const seen: string[] = [];
  for (let i = 0; i < 6; i++) {
    for (const m of await t.run(consumer.poll())) {
      seen.push(`${m.message.offset}:${m.message.value?.toString() ?? ""}`);
    }
  }
  await t.run(consumer.disconnect());
  return seen;
}

/** The partition's batches: `data@offset`, or the control record type's name. */
export function layout(node: Node, topic: string): string[] {
  const log = node.cluster.leaderFor(topic, 0).replica(topic, 0)!.log;
  const names = new Map<number, string>(Object.entries(ControlRecordType).map(([k, v]) => [v, k]));
  return [...log.batches()].map((b) =>
    b.isControl ? (names.get(controlTypeOf(b) ?? -1) ?? "control") : `data@${b.baseOffset}`,
  );
}

/** The broker leading the `__mirror_state` partition of `node`'s `mirror` copy of orders-0 (its coordinator's). */
export function coordinatorBrokerOf(node: Node, mirror = "dr"): number {
  const topicId = node.cluster.controller.image.topic("orders")!.topicId;
  const statePartition = mirrorStatePartitionFor({ mirror, topicId, partition: 0 }, 4);
  return node.cluster.controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!.leader;
}

/**
 * Runs `add` (a re-add or failback of orders); right after its PREPARING truncation cuts `dataLeader`'s log
 * of orders-0, `crash` runs, before the cut is recorded in `__mirror_state`. Returns once `add` returned.
 */
export async function cutThen(
  t: Topology,
  dataLeader: Broker,
  add: () => Promise<unknown>,
  crash: () => void,
): Promise<void> {
  const cut = dataLeader.truncateTo.bind(dataLeader);
  let cuts = 0;
  dataLeader.truncateTo = (topic: string, partition: number, offset: bigint) => {
    cut(topic, partition, offset);
    if (topic !== "orders" || cuts++ > 0) return;
    crash();
  };
  const adding = add().catch((e: unknown) => e);
  await t.until(() => cuts > 0, "the PREPARING truncation's cut");
  await t.run(adding);
}

/**
 * A (orders and audit, RF 3; seed 1, so orders' leader and the coordinator of `back` are distinct brokers)
 * with `a-0` written and transaction `a-tx` open on orders (`a-tx-1`, offset 1) when B, mirroring orders,
 * fails over (STOPPED: B aborted it, spec §4). `beforeMirror` runs on A before B's mirror is made. B's LME
 * lookups wait while `g` is closed.
 */
export async function transactionOpenAtFailover(beforeMirror?: (t: Topology, a: Node) => Promise<void>) {
  const t = topology(["a", "b"], { seed: 1 });
  const a = t.node("a");
  const b = t.node("b");
  const g = gate();
  holdLmeLookups(t, "b", g.wait);
  await t.run(
    a.kafka.admin().createTopics({
      topics: [
        { topic: "orders", numPartitions: 1, replicationFactor: 3 },
        { topic: "audit", numPartitions: 1, replicationFactor: 3 },
      ],
    }),
  );
  await t.advance(200);
  const producerA = a.kafka.producer({ idempotent: true });
  await t.run(producerA.connect());
  await t.run(producerA.send({ topic: "orders", messages: [{ value: "a-0" }], acks: -1 }));
  const txProducer = a.kafka.producer({ transactionalId: "a-tx" });
  await t.run(txProducer.connect());
  const tx = await t.run(txProducer.transaction());
  await t.run(tx.send({ topic: "orders", messages: [{ value: "a-tx-1" }] }));
  await beforeMirror?.(t, a);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await t.run(b.mirroring.whenCaughtUp("dr"));
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.run(b.mirroring.whenState("dr", "STOPPED"));
  const log = () => a.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
  return { t, a, b, g, producerA, txProducer, tx, log };
}
