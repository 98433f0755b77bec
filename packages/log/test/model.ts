import { controlTypeOf, type KafkaError, type RecordBatch } from "@cluster-mirror/protocol";
import type { PartitionLog, ProducerStateEntry } from "../src/index";
import { ABORT, COMMIT, controlBatch, dataBatch, PID_RESET } from "./helpers";

/** What the reference model keeps of a batch: its header. */
export interface ModelBatch {
  base: bigint;
  last: bigint;
  pid: bigint;
  epoch: number;
  seq: number;
  txn: boolean;
  control: number | undefined;
}

export function headerOf(b: RecordBatch): ModelBatch {
  return {
    base: b.baseOffset,
    last: b.lastOffset,
    pid: b.producerId,
    epoch: b.producerEpoch,
    seq: b.baseSequence,
    txn: b.isTransactional,
    control: b.isControl ? controlTypeOf(b) : undefined,
  };
}

interface ModelProducer {
  epoch: number;
  meta: { firstSeq: number; lastSeq: number; firstOffset: bigint; lastOffset: bigint }[];
  txn: bigint | undefined;
}

/**
 * The reference rules, written plainly: producer state from a list of batch headers. Pass the batches
 * retention and DeleteRecords deleted first: the log keeps their producers (Kafka's
 * onLogStartOffsetIncremented forgets none).
 */
export function modelProducers(batches: readonly ModelBatch[]): Map<bigint, ModelProducer> {
  const ps = new Map<bigint, ModelProducer>();
  for (const b of batches) {
    if (b.control === PID_RESET) {
      ps.clear();
      continue;
    }
    if (b.pid < 0n) continue;
    if (b.control !== undefined && b.control !== ABORT && b.control !== COMMIT) continue;
    let p = ps.get(b.pid);
    if (!p) {
      p = { epoch: b.epoch, meta: [], txn: undefined };
      ps.set(b.pid, p);
    }
    if (p.epoch !== b.epoch) {
      p.epoch = b.epoch;
      p.meta = [];
    }
    if (b.control !== undefined) {
      p.txn = undefined;
      continue;
    }
    p.meta.push({
      firstSeq: b.seq,
      lastSeq: b.seq + Number(b.last - b.base),
      firstOffset: b.base,
      lastOffset: b.last,
    });
    if (p.meta.length > 5) p.meta.shift();
    if (b.txn && p.txn === undefined) p.txn = b.base;
  }
  return ps;
}

/** The producer state as the log reports it, without timestamps, for comparison with the model. */
export function comparable(
  entries: readonly ProducerStateEntry[],
): [bigint, number, unknown[], bigint | undefined][] {
  return entries.map((e) => [e.producerId, e.producerEpoch, e.batchMetadata, e.currentTxnFirstOffset]);
}

export function comparableModel(
  ps: Map<bigint, ModelProducer>,
): [bigint, number, unknown[], bigint | undefined][] {
  return [...ps.entries()]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .map(([pid, p]) => [pid, p.epoch, p.meta, p.txn]);
}

/** A command of the random sequences. */
export type Command =
  | { t: "plain"; count: number; key: number; tombstone: boolean }
  | {
      t: "idem";
      pid: number;
      kind: "next" | "gap" | "dup" | "newEpoch" | "oldEpoch" | "unknown";
      pick: number;
      count: number;
      key: number;
    }
  | { t: "txn"; pid: number; count: number; key: number }
  | { t: "marker"; pid: number; commit: boolean }
  | { t: "reset" }
  | { t: "truncate"; frac: number }
  | { t: "hw"; frac: number }
  | { t: "compact"; advanceMs: number }
  | { t: "deleteRecords"; frac: number }
  | { t: "reopen" };

/** Expected outcome of a client produce under the reference rules. */
export function expectedOutcome(
  p: ModelProducer | undefined,
  epoch: number,
  seq: number,
  count: number,
  txn: boolean,
): "ok" | "dup" | number {
  if (p && p.epoch === epoch && p.meta.some((m) => m.firstSeq === seq && m.lastSeq === seq + count - 1))
    return "dup";
  // Kafka 2.5+ (KIP-360): a producer the partition has no state for may start at any sequence.
  if (!p) return "ok";
  if (epoch < p.epoch) return 47;
  if (epoch > p.epoch) return seq !== 0 ? 45 : "ok";
  const lastSeq = p.meta[p.meta.length - 1]?.lastSeq;
  const next = lastSeq === undefined ? 0 : lastSeq + 1;
  if (seq !== next) return 45;
  if (!txn && p.txn !== undefined) return 48;
  return "ok";
}

/** The batch bytes and expected outcome for a produce command, given the model's producer state. */
export function produceFor(
  cmd: Extract<Command, { t: "idem" | "txn" }>,
  ps: Map<bigint, ModelProducer>,
): { bytes: Buffer; expected: "ok" | "dup" | number; pid: bigint } {
  const pid = BigInt(cmd.t === "idem" && cmd.kind === "unknown" ? 100 + cmd.pid : cmd.pid);
  const p = ps.get(pid);
  const lastSeq = p?.meta[p.meta.length - 1]?.lastSeq;
  const next = lastSeq === undefined ? 0 : lastSeq + 1;
  let epoch = p?.epoch ?? 0;
  let seq = next;
  let count = cmd.count;
  const txn = cmd.t === "txn";
  if (cmd.t === "idem") {
    if (cmd.kind === "gap") seq = next + 2;
    if (cmd.kind === "unknown") seq = 3;
    if (cmd.kind === "newEpoch") {
      epoch += 1;
      seq = cmd.pick % 2;
    }
    if (cmd.kind === "oldEpoch" && epoch > 0) epoch -= 1;
    if (cmd.kind === "dup" && p && p.meta.length > 0) {
      const m = p.meta[cmd.pick % p.meta.length]!;
      seq = m.firstSeq;
      count = m.lastSeq - m.firstSeq + 1;
    }
  }
  const keys = Array.from({ length: count }, (_, i) => `k${(cmd.key + i) % 4}`);
  return {
    bytes: dataBatch({ pid, epoch, seq, txn, keys }),
    expected: expectedOutcome(p, epoch, seq, count, txn),
    pid,
  };
}

/** The marker a coordinator would write for `pid` (its current epoch). */
export function markerFor(pid: bigint, commit: boolean, ps: Map<bigint, ModelProducer>): Buffer {
  return controlBatch(commit ? COMMIT : ABORT, { pid, epoch: ps.get(pid)?.epoch ?? 0 });
}

export function errorCode(e: unknown): number {
  return (e as KafkaError).code;
}

/** Everything observable about a log, for comparing two logs. */
export function observe(log: PartitionLog) {
  return {
    logStartOffset: log.logStartOffset,
    logEndOffset: log.logEndOffset,
    highWatermark: log.highWatermark,
    lastStableOffset: log.lastStableOffset,
    epochs: log.epochEntries(),
    producers: log.producerStateSnapshot(),
    ongoing: log.ongoingTransactions(),
    aborted: log.abortedTransactions(),
    segments: log.segments(),
    bytes: Buffer.concat([...log.batches()].map((b) => b.buffer)).toString("hex"),
  };
}
