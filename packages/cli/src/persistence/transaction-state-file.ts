import * as fs from "node:fs";
import type { TransactionState, TransactionStateName } from "@cluster-mirror/cluster";
import { writeFileAtomically } from "./atomic-file";

/** File name of the persisted transaction state (Kafka's `__transaction_state`) inside a cluster's data dir. */
export const TRANSACTION_STATE_FILE = "transactions.json";

/** Fields that hold bigints (stored as decimal strings). */
const BIGINT_FIELDS = new Set(["producerId", "firstOffset"]);

const STATES = new Set<TransactionStateName>([
  "Empty",
  "Ongoing",
  "PrepareCommit",
  "PrepareAbort",
  "CompleteCommit",
  "CompleteAbort",
]);

/** Reads the transaction state file; missing file: no transactions. */
export function readTransactionState(file: string): TransactionState {
  if (!fs.existsSync(file)) return { transactions: [], heldMarkers: [] };
  let state: TransactionState;
  try {
    state = JSON.parse(fs.readFileSync(file, "utf8"), (key, value: unknown) =>
      BIGINT_FIELDS.has(key) && typeof value === "string" ? BigInt(value) : value,
    ) as TransactionState;
    check(state);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(
      `${file} is corrupt (${why}); restore it from a backup, or delete it to start without the transactions' state (a transaction open on a log then stays open: read_committed consumers stop before it)`,
      { cause: error },
    );
  }
  return state;
}

/** Writes the transaction state atomically (see `writeFileAtomically`). */
export function writeTransactionState(file: string, state: TransactionState, fsync: boolean): void {
  const text = JSON.stringify(state, (_key, value: unknown) =>
    typeof value === "bigint" ? value.toString() : value,
  );
  writeFileAtomically(file, text, fsync);
}

function check(state: TransactionState): void {
  if (!Array.isArray(state?.transactions) || !Array.isArray(state.heldMarkers))
    throw new Error("expected {transactions: [...], heldMarkers: [...]}");
  for (const t of state.transactions) {
    const end = t?.lastEnd;
    if (
      typeof t?.transactionalId !== "string" ||
      !isProducer(t) ||
      !STATES.has(t.state) ||
      !Number.isInteger(t.transactionTimeoutMs) ||
      !Number.isFinite(t.txnStartTimestamp) ||
      (t.txnLastUpdateTimestamp !== undefined && !Number.isFinite(t.txnLastUpdateTimestamp)) ||
      !isPartitionList(t.partitions) ||
      !isPartitionList(t.pendingMarkers) ||
      (end !== undefined && (!isResult(end.result) || !isProducer(end) || !isPartitionList(end.partitions)))
    )
      throw new Error(`bad transaction entry ${JSON.stringify(t?.transactionalId ?? null)}`);
  }
  for (const m of state.heldMarkers) {
    if (
      !isProducer(m) ||
      typeof m.firstOffset !== "bigint" ||
      typeof m.topicId !== "string" ||
      !isPartition(m.partition) ||
      !isResult(m.result) ||
      !Number.isInteger(m.coordinatorEpoch) ||
      (m.heldAt !== undefined && !Number.isInteger(m.heldAt))
    )
      throw new Error("bad held marker entry");
  }
}

function isProducer(p: { producerId?: unknown; producerEpoch?: unknown } | undefined): boolean {
  return typeof p?.producerId === "bigint" && Number.isInteger(p.producerEpoch);
}

function isResult(result: unknown): boolean {
  return result === "COMMIT" || result === "ABORT";
}

function isPartition(tp: unknown): boolean {
  const p = tp as { topic?: unknown; partition?: unknown } | undefined;
  return typeof p?.topic === "string" && Number.isInteger(p.partition) && (p.partition as number) >= 0;
}

function isPartitionList(list: unknown): boolean {
  return Array.isArray(list) && list.every(isPartition);
}
