import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import type { topology } from "./helpers";

/**
 * Helpers of the scenarios where a re-add or failback is removed again while PREPARING, and of what its
 * failover does to the topic's transactions (readd-cancel-transactions, failback-cut-transactions).
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
