import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Transaction } from "../src/index";
import { BUSY_TASKS, clientCluster } from "./clients-helpers";

const SEED = Number(process.env.FC_SEED ?? 20261129);
const NUM_RUNS = 50;

type Op =
  | { type: "send"; crashLeader: boolean }
  | { type: "txnSend"; crashLeader: boolean }
  | { type: "commit" }
  | { type: "abort" }
  | { type: "crash"; broker: number }
  | { type: "restart" }
  | { type: "settle"; ms: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant("send" as const), crashLeader: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant("txnSend" as const), crashLeader: fc.boolean() }) },
  { weight: 2, arbitrary: fc.constant({ type: "commit" as const }) },
  { weight: 1, arbitrary: fc.constant({ type: "abort" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ type: fc.constant("crash" as const), broker: fc.integer({ min: 0, max: 2 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ type: "restart" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ type: fc.constant("settle" as const), ms: fc.integer({ min: 0, max: 40_000 }) }),
  },
);

/**
 * Runs the ops against a 3-broker cluster (RF=3, acks=all): an idempotent producer and a transactional
 * one, with at most one broker down at a time, some leaders crashed while a produce is in flight. Returns
 * what was acknowledged, what was aborted, and what a read_committed consumer finally reads.
 */
async function scenario(ops: readonly Op[]) {
  const t = clientCluster();
  t.cluster.controller.createTopic({ name: "t", numPartitions: 2, replicationFactor: 3 });
  const idem = t.kafka.producer({ idempotent: true, retry: { retries: 8, initialRetryTime: 50 } });
  const txp = t.kafka.producer({ transactionalId: "tx", retry: { retries: 8, initialRetryTime: 50 } });
  await idem.connect();
  await txp.connect();
  const acked = new Set<string>();
  const maybe = new Set<string>(); // sent, outcome unknown: may appear at most once
  const aborted = new Set<string>();
  let open: { txn: Transaction; values: string[]; uncertain: boolean } | undefined;
  let n = 0;
  const down = () => [0, 1, 2].filter((b) => !t.cluster.runningBrokers().includes(b));
  const crashSoon = (topicPartition: number) => {
    if (down().length > 0) return;
    const leader = t.cluster.controller.image.partition("t", topicPartition)!.leader;
    t.scheduler.schedule(() => {
      if (down().length === 0) t.cluster.crashBroker(leader);
    }, 0);
  };
  for (const op of ops) {
    switch (op.type) {
      case "send": {
        const value = `s${n++}`;
        const partition = n % 2;
        const sending = idem.send({ topic: "t", messages: [{ value, partition }] });
        if (op.crashLeader) crashSoon(partition);
        try {
          await t.run(sending);
          acked.add(value);
        } catch {
          maybe.add(value);
        }
        break;
      }
      case "txnSend": {
        if (!open) open = { txn: await t.run(txp.transaction()), values: [], uncertain: false };
        const value = `x${n++}`;
        const partition = n % 2;
        const sending = open.txn.send({ topic: "t", messages: [{ value, partition }] });
        if (op.crashLeader) crashSoon(partition);
        open.values.push(value);
        try {
          await t.run(sending);
        } catch {
          open.uncertain = true;
        }
        break;
      }
      case "commit":
      case "abort": {
        if (!open) break;
        const txn = open;
        open = undefined;
        if (op.type === "commit" && !txn.uncertain) {
          await t.run(txn.txn.commit());
          for (const v of txn.values) acked.add(v);
        } else {
          await t.run(txn.txn.abort());
          for (const v of txn.values) aborted.add(v);
        }
        break;
      }
      case "crash":
        if (down().length === 0) t.cluster.crashBroker(op.broker);
        break;
      case "restart":
        for (const b of down()) t.cluster.startBroker(b);
        break;
      case "settle":
        t.scheduler.run(op.ms, BUSY_TASKS);
        break;
    }
  }
  if (open) {
    await t.run(open.txn.abort());
    for (const v of open.values) aborted.add(v);
  }
  for (const b of down()) t.cluster.startBroker(b);
  t.scheduler.run(1000, BUSY_TASKS);
  const consumer = t.kafka.consumer({ groupId: "check" });
  await consumer.connect();
  await consumer.subscribe({ topic: "t", fromBeginning: true });
  const read: string[] = [];
  for (let empty = 0; empty < 3; ) {
    const got = await t.run(consumer.poll());
    if (got.length === 0) empty++;
    read.push(...got.map((m) => m.message.value!.toString()));
  }
  return { acked, maybe, aborted, read };
}

describe("clients under broker crashes (property)", () => {
  it(`never loses an acknowledged record and never duplicates one (seed ${SEED}, ${NUM_RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 16 }), async (ops) => {
        const { acked, maybe, aborted, read } = await scenario(ops);
        const counts = new Map<string, number>();
        for (const v of read) counts.set(v, (counts.get(v) ?? 0) + 1);
        for (const [v, count] of counts) {
          expect(count, `${v} read ${count} times`).toBe(1);
          expect(aborted.has(v), `${v} belongs to an aborted transaction`).toBe(false);
          expect(acked.has(v) || maybe.has(v), `${v} was never sent`).toBe(true);
        }
        for (const v of acked) expect(counts.get(v), `acknowledged ${v} lost`).toBe(1);
      }),
      { seed: SEED, numRuns: NUM_RUNS, verbose: 1 },
    );
  });
});
