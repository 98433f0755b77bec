import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ControlRecordType,
  CorruptRecordError,
  controlTypeOf,
  decodeControlRecordKey,
  decodeEndTxnMarkerValue,
  decodeMirrorPidResetValue,
  decodeRecordBatch,
  encodeControlRecordKey,
  encodeEndTxnMarkerBatch,
  encodeMirrorPidResetBatch,
  encodeRecordBatch,
  loadCompressionCodecs,
  RecordBatch,
} from "../src/index";
import { onlyTypedErrors, SEED } from "./helpers";

describe("control records", () => {
  it("writes ABORT and COMMIT markers as Kafka does", () => {
    for (const type of [ControlRecordType.ABORT, ControlRecordType.COMMIT]) {
      const bytes = encodeEndTxnMarkerBatch({
        type,
        producerId: 4001n,
        producerEpoch: 5,
        coordinatorEpoch: 17,
        baseOffset: 99n,
        partitionLeaderEpoch: 3,
        timestamp: 1_700_000_000_000n,
      });
      const batch = new RecordBatch(bytes);
      batch.validate();
      expect(batch.isControl).toBe(true);
      expect(batch.isTransactional).toBe(true);
      expect(batch.compression).toBe(0);
      expect(batch.producerId).toBe(4001n);
      expect(batch.producerEpoch).toBe(5);
      expect(batch.baseSequence).toBe(-1);
      expect(batch.baseOffset).toBe(99n);
      expect(batch.partitionLeaderEpoch).toBe(3);
      expect(batch.baseTimestamp).toBe(1_700_000_000_000n);
      expect(batch.maxTimestamp).toBe(1_700_000_000_000n);
      expect(batch.recordCount).toBe(1);
      expect(batch.controlType).toBe(type);
      expect(controlTypeOf(batch)).toBe(type);
      const [record] = decodeRecordBatch(batch).records;
      expect(record!.key).toEqual(Buffer.from([0, 0, 0, type]));
      expect(record!.value).toEqual(Buffer.from([0, 0, 0, 0, 0, 17]));
      expect(decodeEndTxnMarkerValue(record!.value)).toEqual({ version: 0, coordinatorEpoch: 17 });
    }
  });

  it("writes the MIRROR_PID_RESET barrier (type 7, non-transactional, no producer)", () => {
    const bytes = encodeMirrorPidResetBatch({ sourceClusterId: "src-cluster-Ω", timestamp: 5n });
    const batch = new RecordBatch(bytes);
    batch.validate();
    expect(batch.isControl).toBe(true);
    expect(batch.isTransactional).toBe(false);
    expect(batch.producerId).toBe(-1n);
    expect(batch.producerEpoch).toBe(-1);
    expect(batch.baseSequence).toBe(-1);
    expect(batch.partitionLeaderEpoch).toBe(-1);
    expect(batch.controlType).toBe(7);
    const [record] = decodeRecordBatch(bytes).records;
    expect(decodeControlRecordKey(record!.key)).toEqual({ version: 0, type: 7 });
    expect(record!.value!.readInt16BE(0)).toBe(0);
    expect(record!.value!.readInt16BE(2)).toBe(Buffer.byteLength("src-cluster-Ω"));
    expect(decodeMirrorPidResetValue(record!.value)).toEqual({
      version: 0,
      sourceClusterId: "src-cluster-Ω",
    });
  });

  it("controlType is -1 for data batches and empty control batches", () => {
    const rec = { attributes: 0, offsetDelta: 0, timestampDelta: 0n, key: null, value: null, headers: [] };
    expect(new RecordBatch(encodeRecordBatch({ records: [rec] })).controlType).toBe(-1);
    expect(new RecordBatch(encodeRecordBatch({ isControl: true, records: [] })).controlType).toBe(-1);
    expect(
      controlTypeOf(new RecordBatch(encodeRecordBatch({ isControl: true, records: [] }))),
    ).toBeUndefined();
  });

  it("reads the type of a compressed control batch (not written by Kafka, but readable)", async () => {
    await loadCompressionCodecs();
    const rec = {
      attributes: 0,
      offsetDelta: 0,
      timestampDelta: 0n,
      key: encodeControlRecordKey(1),
      value: null,
      headers: [],
    };
    for (const compression of [1, 2, 3, 4] as const) {
      expect(
        new RecordBatch(encodeRecordBatch({ isControl: true, compression, records: [rec] })).controlType,
      ).toBe(1);
    }
  });

  it("reads newer key and value versions by their version-0 prefix, as Kafka does", () => {
    expect(decodeControlRecordKey(Buffer.from([0, 1, 0, 7, 9, 9]))).toEqual({ version: 1, type: 7 });
    expect(decodeEndTxnMarkerValue(Buffer.from([0, 1, 0, 0, 0, 2, 1]))).toEqual({
      version: 1,
      coordinatorEpoch: 2,
    });
    expect(decodeMirrorPidResetValue(Buffer.from([0, 1, 0, 1, 0x61, 5, 5]))).toEqual({
      version: 1,
      sourceClusterId: "a",
    });
  });

  it("rejects short, null and negative-version keys and values with CorruptRecordError", () => {
    expect(() => decodeControlRecordKey(null)).toThrow(CorruptRecordError);
    expect(() => decodeControlRecordKey(Buffer.from([0, 0, 0]))).toThrow(CorruptRecordError);
    expect(() => decodeControlRecordKey(Buffer.from([0xff, 0xff, 0, 0]))).toThrow(/negative version/);
    expect(() => decodeEndTxnMarkerValue(null)).toThrow(CorruptRecordError);
    expect(() => decodeEndTxnMarkerValue(Buffer.from([0, 0, 0, 0, 0]))).toThrow(CorruptRecordError);
    expect(() => decodeEndTxnMarkerValue(Buffer.from([0x80, 0, 0, 0, 0, 0]))).toThrow(CorruptRecordError);
    expect(() => decodeMirrorPidResetValue(Buffer.from([0, 0, 0, 5, 0x61]))).toThrow(CorruptRecordError);
    expect(() => decodeMirrorPidResetValue(Buffer.from([0, 0, 0xff, 0xff]))).toThrow(CorruptRecordError);
    expect(() => decodeMirrorPidResetValue(null)).toThrow(CorruptRecordError);
  });

  it("control codecs round-trip and throw only typed errors on any bytes", () => {
    // numRuns: 1000
    fc.assert(
      fc.property(
        fc.integer({ min: -32768, max: 32767 }),
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.string({ unit: "grapheme", maxLength: 30 }),
        fc.uint8Array({ maxLength: 12 }),
        (type, epoch, clusterId, raw) => {
          expect(decodeControlRecordKey(encodeControlRecordKey(type)).type).toBe(type);
          const bytes = Buffer.from(raw);
          onlyTypedErrors(() => decodeControlRecordKey(bytes));
          onlyTypedErrors(() => decodeEndTxnMarkerValue(bytes));
          onlyTypedErrors(() => decodeMirrorPidResetValue(bytes));
          const marker = encodeEndTxnMarkerBatch({
            type: 0,
            producerId: 1n,
            producerEpoch: 0,
            coordinatorEpoch: epoch,
            timestamp: 0n,
          });
          expect(decodeEndTxnMarkerValue(decodeRecordBatch(marker).records[0]!.value).coordinatorEpoch).toBe(
            epoch,
          );
          const reset = encodeMirrorPidResetBatch({ sourceClusterId: clusterId, timestamp: 0n });
          const value = decodeRecordBatch(reset).records[0]!.value!;
          expect(decodeMirrorPidResetValue(value).sourceClusterId).toBe(clusterId);
          for (let n = 0; n < value.length; n++) {
            expect(() => decodeMirrorPidResetValue(value.subarray(0, n))).toThrow(CorruptRecordError);
          }
          for (let n = 0; n < marker.length; n++) {
            expect(onlyTypedErrors(() => controlTypeOf(new RecordBatch(marker.subarray(0, n))))).toBe(
              "typed",
            );
          }
        },
      ),
      { seed: SEED, numRuns: 1000 },
    );
  });
});
