import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  type CompressionType,
  ControlRecordType,
  encodeEndTxnMarkerBatch,
  encodeMirrorPidResetBatch,
  encodeRecordBatch,
  type Record,
  recordBatches,
} from "@cluster-mirror/protocol";
import { type LogConfig, ManualClock, MemoryLogStorage, PartitionLog } from "../src/index";

/** A data batch as a producer sends it (offsets from 0). */
export interface DataBatchSpec {
  pid?: bigint;
  epoch?: number;
  seq?: number;
  txn?: boolean;
  count?: number;
  /** Keys (one per record), null for no key. */
  keys?: (string | null)[];
  /** Values (one per record), null for a tombstone. */
  values?: (string | null)[];
  baseOffset?: bigint;
  leaderEpoch?: number;
  baseTimestamp?: bigint;
  /** Codec of the records section (default none). */
  compression?: CompressionType;
}

export function dataBatch(spec: DataBatchSpec = {}): Buffer {
  const count = spec.keys?.length ?? spec.count ?? 1;
  const records: Record[] = [];
  for (let i = 0; i < count; i++) {
    const key = spec.keys?.[i];
    const value = spec.values ? spec.values[i] : `v${i}`;
    records.push({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: BigInt(i),
      key: key === undefined || key === null ? null : Buffer.from(key),
      value: value === undefined || value === null ? null : Buffer.from(value),
      headers: [],
    });
  }
  return encodeRecordBatch({
    baseOffset: spec.baseOffset ?? 0n,
    partitionLeaderEpoch: spec.leaderEpoch ?? -1,
    compression: spec.compression ?? 0,
    isTransactional: spec.txn ?? false,
    baseTimestamp: spec.baseTimestamp ?? 1000n,
    producerId: spec.pid ?? -1n,
    producerEpoch: spec.pid === undefined ? -1 : (spec.epoch ?? 0),
    baseSequence: spec.pid === undefined ? -1 : (spec.seq ?? 0),
    records,
  });
}

/**
 * A control batch as the protocol writes it: an ABORT/COMMIT marker of producer `pid`, or MIRROR_PID_RESET
 * (no producer).
 */
export function controlBatch(
  type: number,
  opts: { pid?: bigint; epoch?: number; baseOffset?: bigint; leaderEpoch?: number } = {},
): Buffer {
  const common = {
    baseOffset: opts.baseOffset ?? 0n,
    partitionLeaderEpoch: opts.leaderEpoch ?? -1,
    timestamp: 1000n,
  };
  if (type === ControlRecordType.MIRROR_PID_RESET) {
    return encodeMirrorPidResetBatch({ ...common, sourceClusterId: "source-cluster" });
  }
  if (type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) {
    throw new RangeError(`control type ${type} is not a marker this helper writes`);
  }
  return encodeEndTxnMarkerBatch({
    ...common,
    type,
    producerId: opts.pid ?? -1n,
    producerEpoch: opts.epoch ?? -1,
    coordinatorEpoch: 0,
  });
}

export const ABORT = ControlRecordType.ABORT;
export const COMMIT = ControlRecordType.COMMIT;
export const PID_RESET = ControlRecordType.MIRROR_PID_RESET;

export function memoryLog(config: Partial<LogConfig> = {}): { log: PartitionLog; clock: ManualClock } {
  const clock = new ManualClock(1_000_000);
  const log = PartitionLog.open(new MemoryLogStorage(), { clock, ...config });
  return { log, clock };
}

/** Base offsets of the batches in a fetch result. */
export function baseOffsets(records: Buffer): bigint[] {
  return [...recordBatches(records)].map((b) => b.baseOffset);
}

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "cluster-mirror-log-"));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
