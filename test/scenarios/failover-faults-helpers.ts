import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import { expect } from "vitest";
import { leaderBatches, type Node, type Topology, topology } from "./helpers";

/**
 * Helpers of the failover fault scenarios (spec §4 STOPPING with a fault at each step): `t` (1 partition,
 * RF 3) on a, with three idempotent records, a committed transaction and one transaction left open, mirrored
 * to b by `dr` until caught up.
 */
export async function mirroredWithOpenTransaction(
  seed: number,
  options: { brokers?: number; statePartitions?: number } = {},
) {
  const t = topology(["a", "b"], { seed, ...options });
  const a = t.node("a");
  const b = t.node("b");
  await t.run(
    a.kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1, replicationFactor: 3 }] }),
  );
  const idem = a.kafka.producer({ idempotent: true });
  await t.run(idem.connect());
  for (let i = 0; i < 3; i++) {
    await t.run(idem.send({ topic: "t", messages: [{ value: `acked-${i}` }], acks: -1 }));
  }
  const committed = a.kafka.producer({ transactionalId: "committed" });
  await t.run(committed.connect());
  const c = await t.run(committed.transaction());
  await t.run(c.send({ topic: "t", messages: [{ value: "committed" }] }));
  await t.run(c.commit());
  const open = a.kafka.producer({ transactionalId: "open-at-failover" });
  await t.run(open.connect());
  const o = await t.run(open.transaction());
  await t.run(o.send({ topic: "t", messages: [{ value: "in-flight" }] }));
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "t"));
  await t.run(b.mirroring.whenCaughtUp("dr"));
  return { t, a, b };
}

/** The absolute oracles of a finished failover of `t-0` on `b` (source `a`). */
export async function expectCleanFailover(t: Topology, a: Node, b: Node) {
  const [row] = await b.mirroring.admin.describe("dr");
  expect(row?.state).toBe("STOPPED");
  const onB = expectOneBarrierLast(b);
  // Every source batch (acknowledged before the barrier) is on b at its offset, byte for byte.
  const onA = leaderBatches(a.cluster, "t", 0);
  const bByOffset = new Map(onB.map((x) => [x.offset, x.hex]));
  for (const x of onA) expect(bByOffset.get(x.offset)).toBe(x.hex);
  // The recorded LME is the highest epoch among the mirrored batches.
  const mirrored = onB.filter((x) => x.offset < onA.at(-1)!.batch.nextOffset);
  expect(row?.lastMirrorEpoch).toBe(Math.max(...mirrored.map((x) => x.epoch)));
  // The barrier and local writes carry an epoch above every mirrored batch.
  expect(onB.at(-1)!.epoch).toBeGreaterThan(row!.lastMirrorEpoch);
  // Every running replica holds the same bytes.
  const leaderHex = onB.map((x) => x.hex);
  for (const id of b.cluster.runningBrokers()) {
    const r = b.cluster.broker(id)!.replica("t", 0);
    if (r) expect([...r.log.batches()].map((x) => x.buffer.toString("hex"))).toEqual(leaderHex);
  }
  await expectWritable(t, b);
}

/**
 * `t-0`'s leader log on `b` holds one ABORT (the one open source transaction aborted exactly once) and one
 * PID reset, its last batch, with nothing left open. Returns the leader's batches.
 */
export function expectOneBarrierLast(b: Node) {
  const onB = leaderBatches(b.cluster, "t", 0);
  const kinds = onB.map((x) => (x.batch.isControl ? controlTypeOf(x.batch) : "data"));
  expect(kinds.filter((k) => k === ControlRecordType.ABORT)).toHaveLength(1);
  expect(kinds.filter((k) => k === ControlRecordType.MIRROR_PID_RESET)).toHaveLength(1);
  expect(kinds.at(-1)).toBe(ControlRecordType.MIRROR_PID_RESET);
  const log = b.cluster.leaderFor("t", 0).replica("t", 0)!.log;
  expect(log.lastStableOffset).toBe(log.logEndOffset);
  return onB;
}

/** `t-0` on `b` is writable: a local idempotent and a local transactional producer write and commit. */
export async function expectWritable(t: Topology, b: Node) {
  const idem = b.kafka.producer({ idempotent: true });
  await t.run(idem.connect());
  await t.run(idem.send({ topic: "t", messages: [{ value: "local" }], acks: -1 }));
  const txp = b.kafka.producer({ transactionalId: "local-tx" });
  await t.run(txp.connect());
  const tx = await t.run(txp.transaction());
  await t.run(tx.send({ topic: "t", messages: [{ value: "local-tx" }] }));
  await t.run(tx.commit());
  const after = b.cluster.leaderFor("t", 0).replica("t", 0)!.log;
  expect(after.lastStableOffset).toBe(after.logEndOffset);
}

export type Phase = "recording the LME" | "markers not yet replicated" | "markers replicated" | "STOPPED";

/** True once `t-0`'s failover on `b` has reached `phase` (see the STOPPING steps, spec §4). */
function reached(b: Node, phase: Phase): boolean {
  const state = b.mirroring.coordinators.describe("dr")[0]?.state;
  if (phase === "STOPPED") return state === "STOPPED";
  if (state !== "STOPPING") return false;
  const log = b.cluster.leaderFor("t", 0).replica("t", 0)!.log;
  const kinds = leaderBatches(b.cluster, "t", 0).map((x) =>
    x.batch.isControl ? controlTypeOf(x.batch) : "data",
  );
  const barrier = kinds.at(-1) === ControlRecordType.MIRROR_PID_RESET;
  if (phase === "recording the LME") return !barrier;
  if (phase === "markers not yet replicated") return barrier && log.highWatermark < log.logEndOffset;
  return barrier && log.highWatermark === log.logEndOffset;
}

/** Advances virtual time 1 ms at a time until `t-0`'s failover on `b` is at `phase`. */
export async function advanceTo(t: Topology, b: Node, phase: Phase) {
  for (let ms = 0; ms < 10_000; ms++) {
    if (reached(b, phase)) return;
    await t.advance(1);
  }
  throw new Error(`the failover never reached '${phase}'`);
}

/**
 * Removes `t` from `dr` on `b` with the destination's replication slowed (15 ms), runs `fault` once the
 * failover is at `phase`, waits for STOPPED and puts replication back to normal.
 */
export async function failoverWithFaultAt(
  t: Topology,
  b: Node,
  phase: Phase,
  fault: () => void | Promise<void>,
) {
  b.cluster.setReplicationLatency(15);
  const removing = b.mirroring.admin.removeTopics("dr", "t").catch((e: unknown) => e);
  await advanceTo(t, b, phase);
  await fault();
  await t.run(removing);
  await t.run(b.mirroring.whenState("dr", "STOPPED", { timeoutMs: 300_000 }));
  b.cluster.setReplicationLatency(0);
}

export const PHASES: Phase[] = [
  "recording the LME",
  "markers not yet replicated",
  "markers replicated",
  "STOPPED",
];
