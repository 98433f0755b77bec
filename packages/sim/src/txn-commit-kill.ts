import type { TransactionState } from "@cluster-mirror/cluster";
import type { Simulation } from "./simulation";
import { recordCommit, txnBegin, txnEnd } from "./workload";

/**
 * Commits the open transaction (one begun on writable target `target`, partition `partition`, as `txnBegin`,
 * when none is open) and kills its whole node (`Simulation.restartNode`) inside the commit: `when` 0 (even)
 * the moment the coordinator stored its decision (PrepareCommit), before any marker is written (the kill
 * runs inside that store: the rest of the old process's call finds it dead); 1 (odd) `delayMs` after the
 * leader of its partition appended the COMMIT marker. The new process must finish the commit from the
 * stored state (its markers written again) and never abort it. A commit decided when the node died counts
 * as committed in the model even though `commit()` did not return to the client (its connection died): the
 * committed-transaction checks and the marker watch then hold it to that. No kill when the commit is not
 * decided, or (`when` 1) its marker not written, while `commit()` runs.
 */
export async function txnCommitKill(
  sim: Simulation,
  target: number,
  partition: number,
  when: number,
  delayMs: number,
): Promise<void> {
  if (!sim.openTxn) await txnBegin(sim, target, partition);
  const open = sim.openTxn;
  if (!open) return;
  let returned = false;
  // Set once the kill is scheduled, cleared once it ran: the command waits for it (below).
  let killPending = false;
  const kill = () => {
    killPending = false;
    const state = sim.node(open.node).cluster.transactions.describeTransaction(open.transactionalId)?.state;
    // What the coordinator stored last is what the new process loads (its store is synchronous). Recorded
    // from the old process's log, before the kill, unless `commit()` returned first (recorded then).
    if (!returned && (state === "PrepareCommit" || state === "CompleteCommit"))
      recordCommit(sim, open.node, open.topic, open.partition, open.offset);
    sim.restartNode(open.node);
    sim.step(
      `kill -9 node ${open.node} ${atDecision ? "as its coordinator stored the commit decision, before any marker" : `${delayMs} ms after the COMMIT marker of ${open.topic}-${open.partition} was appended`} (transaction ${state ?? "unknown"})`,
    );
  };
  const atDecision = when % 2 === 0;
  const armed = (node: string, _brokerId: number, topic: string, p: number) => {
    if (node !== open.node || topic !== open.topic || p !== open.partition) return;
    sim.controlAppendListeners.delete(armed);
    // A task of its own, not inside the append: the old process's call returns before the kill.
    killPending = true;
    sim.world.scheduler.schedule(kill, delayMs);
  };
  const stored = (node: string, state: TransactionState) => {
    const txn = state.transactions.find((t) => t.transactionalId === open.transactionalId);
    if (node !== open.node || txn?.state !== "PrepareCommit") return;
    sim.world.transactionStoreListeners.delete(stored);
    kill();
  };
  if (atDecision) sim.world.transactionStoreListeners.add(stored);
  else sim.controlAppendListeners.add(armed);
  const commits = sim.model.commits.length;
  try {
    await txnEnd(sim, true);
  } finally {
    returned = true;
    sim.controlAppendListeners.delete(armed);
    sim.world.transactionStoreListeners.delete(stored);
  }
  // The kill lands inside this command, not inside the next one: a command talking to the old process
  // when it dies would wait for good for an answer (soak faults FC_SEED=402: a failover's removeTopics).
  if (killPending) await sim.world.time.advance(delayMs);
  // A commit recorded at the kill whose `commit()` still returned ok afterwards is recorded once.
  const added = sim.model.commits.slice(commits);
  if (added.length > 1) sim.model.commits.splice(commits + 1);
}
