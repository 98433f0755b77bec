import { transactionOutcome } from "./invariants/transactions";
import { MARKER_BOUND_MS } from "./invariants/txn-markers";
import type { Violation } from "./invariants/violation";
import { type AbandonedTxn, partitionId } from "./model";
import type { Simulation } from "./simulation";

/** The workload's transactional producers' transaction.timeout.ms (the client's default). */
const TRANSACTION_TIMEOUT_MS = 60_000;
/** How often the coordinator aborts timed-out transactions (transaction.abort...interval.ms default). */
const ABORT_INTERVAL_MS = 10_000;

/**
 * By when the coordinator of the restarted node must have ended `t`: its timeout counts from its start
 * (stored with the transaction), the new process's first abort pass may come one interval after that, and
 * writing the ABORT marker takes up to the marker bound.
 */
export function abandonedDeadline(t: AbandonedTxn): number {
  return Math.max(t.beganAt + TRANSACTION_TIMEOUT_MS, t.abandonedAt) + ABORT_INTERVAL_MS + MARKER_BOUND_MS;
}

/**
 * Every transaction abandoned by a node restart (its producer died: see `Simulation.restartNode`) is
 * aborted by then: its partition's leader log holds an ABORT marker after its data batch, so the last
 * stable offset moves past it and read_committed consumers reach the log end. It must never read as
 * committed (nobody committed it) nor stay open (a hanging transaction). Skipped where the log no longer
 * holds the transaction as it was: a mirror's cut reached it (a re-add or failback since), its topic is a
 * mirror there now (its log is the source's), the partition lost data (unclean election), or the batch is
 * gone (deleted topic, retention).
 */
export async function checkAbandonedTxns(sim: Simulation): Promise<Violation[]> {
  const due = sim.model.abandonedTxns.filter((t) => !replaced(sim, t));
  if (due.length === 0) return [];
  const last = Math.max(...due.map(abandonedDeadline));
  const now = sim.world.clock.now();
  if (now < last) await sim.world.time.advance(last - now);
  const out: Violation[] = [];
  for (const t of due) {
    if (replaced(sim, t)) continue;
    const outcome = transactionOutcome(
      sim.node(t.node).cluster,
      t.topic,
      t.partition,
      t.producerId,
      t.offset,
    );
    if (outcome !== "OPEN" && outcome !== "COMMITTED") continue;
    out.push({
      invariant: "abandoned-txn-aborted",
      message: `${t.node} ${t.topic}-${t.partition}: the transaction of producer ${t.producerId} (data at offset ${t.offset}), open when ${t.node} was restarted (its producer died), ${outcome === "OPEN" ? `still reads as open ${sim.world.clock.now() - t.beganAt} ms after it began: the restarted coordinator did not abort it at its timeout (the last stable offset stays behind it)` : "reads as committed, though nobody committed it"}`,
    });
  }
  return out;
}

/**
 * The transaction abandoned by a restart of `node` that is open on `topic`-`partition` from `firstOffset`
 * (by `producerId`), if the log still holds it as written. It does not hang: `node`'s own coordinator
 * still runs it (stored in its transaction state) and aborts it at its timeout, which `checkAbandonedTxns`
 * checks. A failover over the topic's own log (a failback removed before its truncation) rightly leaves it
 * to that coordinator: an ABORT marker of the failover's would end a transaction the coordinator runs.
 */
export function abandonedTxnOpen(
  sim: Simulation,
  node: string,
  topic: string,
  partition: number,
  open: { producerId: bigint; firstOffset: bigint },
): AbandonedTxn | undefined {
  return sim.model.abandonedTxns.find(
    (t) =>
      t.node === node &&
      t.topic === topic &&
      t.partition === partition &&
      t.producerId === open.producerId &&
      t.offset === open.firstOffset &&
      !replaced(sim, t),
  );
}

/** Whether the partition's log may no longer hold `t` as it was written (see `checkAbandonedTxns`). */
function replaced(sim: Simulation, t: AbandonedTxn): boolean {
  if (sim.model.diverged.has(partitionId(t.node, t.topic, t.partition))) return true;
  const mirrored = sim.edges.some((e) => {
    const state = e.to === t.node ? sim.edgeState(e, t.topic) : undefined;
    return state !== undefined && state !== "REMOVED";
  });
  if (mirrored) return true;
  return sim.model.truncations.some(
    (c) =>
      c.node === t.node &&
      c.topic === t.topic &&
      c.partition === t.partition &&
      c.at >= t.beganAt &&
      c.offset <= t.offset,
  );
}
