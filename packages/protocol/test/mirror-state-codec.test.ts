import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CorruptRecordError,
  decodeLastMirrorEpochsValue,
  decodeMirrorPartitionStateValue,
  decodeMirrorStateKey,
  decodeMirrorStateRecord,
  encodeLastMirrorEpochsValue,
  encodeMirrorPartitionStateValue,
  encodeMirrorStateKey,
  encodeMirrorStateRecord,
  MIRROR_PARTITION_STATE_NAMES,
  type MirrorPartitionStateValue,
  type MirrorStateKey,
  topicIdFromBase64,
  topicIdFromBytes,
  topicIdToBase64,
  topicIdToBytes,
  UnsupportedVersionError,
} from "../src/index";
import { onlyTypedErrors, SEED } from "./helpers";

const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const keyArb: fc.Arbitrary<MirrorStateKey> = fc.record({
  kind: fc.constantFrom("MirrorPartitionState" as const, "LastMirrorEpochs" as const),
  mirrorName: fc.string({ unit: "grapheme", maxLength: 40 }),
  topicId: fc.uuid(),
  partition: int32,
});
const stateArb = fc.constantFrom(...MIRROR_PARTITION_STATE_NAMES);
const valueArb: fc.Arbitrary<MirrorPartitionStateValue> = fc.record({
  state: stateArb,
  leaderEpoch: int32,
  stateEpoch: int32,
  errorMessage: fc.option(fc.string({ unit: "grapheme", maxLength: 60 }), { nil: null }),
  retryAttempt: fc.integer({ min: -1, max: 32767 }),
  previousState: fc.option(stateArb, { nil: null }),
});

const KEY: MirrorStateKey = {
  kind: "MirrorPartitionState",
  mirrorName: "my-mirror",
  topicId: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
  partition: 3,
};

describe("__mirror_state codecs", () => {
  it("lays the key out as type, name, topic id, partition", () => {
    const key = encodeMirrorStateKey(KEY);
    expect(key.readInt16BE(0)).toBe(2); // MirrorPartitionState
    expect(key.readInt16BE(2)).toBe(9);
    expect(key.toString("utf8", 4, 13)).toBe("my-mirror");
    expect(key.subarray(13, 29).toString("hex")).toBe("0f1e2d3c4b5a69788796a5b4c3d2e1f0");
    expect(key.readInt32BE(29)).toBe(3);
    expect(key.length).toBe(33);
    expect(encodeMirrorStateKey({ ...KEY, kind: "LastMirrorEpochs" }).readInt16BE(0)).toBe(1);
  });

  it("lays MirrorPartitionState v0 out as version, state, epochs, message, retry, previous", () => {
    const v = encodeMirrorPartitionStateValue({
      state: "FAILED",
      leaderEpoch: 5,
      stateEpoch: 9,
      errorMessage: "boom",
      retryAttempt: -1,
      previousState: "MIRRORING",
    });
    expect([...v]).toEqual([0, 0, 7, 0, 0, 0, 5, 0, 0, 0, 9, 0, 4, 0x62, 0x6f, 0x6f, 0x6d, 0xff, 0xff, 2]);
    expect(encodeLastMirrorEpochsValue({ lastMirrorEpoch: 12 })).toEqual(Buffer.from([0, 0, 0, 0, 0, 12]));
  });

  it("round-trips keys, both values and tombstones", () => {
    // numRuns: 500
    fc.assert(
      fc.property(keyArb, valueArb, int32, fc.boolean(), (key, value, lme, tombstone) => {
        expect(decodeMirrorStateKey(encodeMirrorStateKey(key))).toEqual({
          ...key,
          topicId: key.topicId.toLowerCase(),
        });
        expect(decodeMirrorPartitionStateValue(encodeMirrorPartitionStateValue(value))).toEqual(value);
        expect(decodeLastMirrorEpochsValue(encodeLastMirrorEpochsValue({ lastMirrorEpoch: lme }))).toEqual({
          lastMirrorEpoch: lme,
        });
        const record =
          key.kind === "MirrorPartitionState"
            ? { key: { ...key, kind: "MirrorPartitionState" as const }, value: tombstone ? null : value }
            : {
                key: { ...key, kind: "LastMirrorEpochs" as const },
                value: tombstone ? null : { lastMirrorEpoch: lme },
              };
        const bytes = encodeMirrorStateRecord(record);
        expect(bytes.value === null).toBe(tombstone);
        const decoded = decodeMirrorStateRecord(bytes.key, bytes.value);
        expect(decoded.key.kind).toBe(key.kind);
        expect(decoded.value).toEqual(record.value);
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it("rejects every truncation, trailing bytes and random bytes with typed errors only", () => {
    // numRuns: 500
    fc.assert(
      fc.property(keyArb, valueArb, fc.uint8Array({ maxLength: 40 }), (key, value, raw) => {
        const k = encodeMirrorStateKey(key);
        const v = encodeMirrorPartitionStateValue(value);
        const l = encodeLastMirrorEpochsValue({ lastMirrorEpoch: 1 });
        for (let n = 0; n < k.length; n++)
          expect(() => decodeMirrorStateKey(k.subarray(0, n))).toThrow(CorruptRecordError);
        for (let n = 0; n < v.length; n++) {
          expect(() => decodeMirrorPartitionStateValue(v.subarray(0, n))).toThrow(CorruptRecordError);
        }
        for (let n = 0; n < l.length; n++) {
          expect(() => decodeLastMirrorEpochsValue(l.subarray(0, n))).toThrow(CorruptRecordError);
        }
        expect(() => decodeMirrorStateKey(Buffer.concat([k, Buffer.from([0])]))).toThrow(CorruptRecordError);
        expect(() => decodeMirrorPartitionStateValue(Buffer.concat([v, Buffer.from([0])]))).toThrow(
          CorruptRecordError,
        );
        const bytes = Buffer.from(raw);
        onlyTypedErrors(() => decodeMirrorStateKey(bytes));
        onlyTypedErrors(() => decodeMirrorPartitionStateValue(bytes));
        onlyTypedErrors(() => decodeLastMirrorEpochsValue(bytes));
        onlyTypedErrors(() => decodeMirrorStateRecord(k, bytes));
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it("gives UnsupportedVersionError for unknown versions and record types", () => {
    const v = encodeMirrorPartitionStateValue({
      state: "MIRRORING",
      leaderEpoch: 1,
      stateEpoch: 1,
      errorMessage: null,
      retryAttempt: 0,
      previousState: null,
    });
    v.writeInt16BE(1, 0);
    expect(() => decodeMirrorPartitionStateValue(v)).toThrow(UnsupportedVersionError);
    expect(() => decodeLastMirrorEpochsValue(Buffer.from([0, 3, 0, 0, 0, 0]))).toThrow(
      UnsupportedVersionError,
    );
    const k = encodeMirrorStateKey(KEY);
    k.writeInt16BE(9, 0);
    expect(() => decodeMirrorStateKey(k)).toThrow(UnsupportedVersionError);
    k.writeInt16BE(-2, 0);
    expect(() => decodeMirrorStateKey(k)).toThrow(CorruptRecordError);
    expect(() => decodeLastMirrorEpochsValue(Buffer.from([0xff, 0xff, 0, 0, 0, 0]))).toThrow(
      CorruptRecordError,
    );
  });

  it("rejects unknown state codes as corrupt", () => {
    const v = Buffer.from([0, 0, 42, 0, 0, 0, 5, 0, 0, 0, 9, 0xff, 0xff, 0, 0, 0xff]);
    expect(() => decodeMirrorPartitionStateValue(v)).toThrow(/unknown state code 42/);
  });

  it("converts topic ids between UUID string, bytes and Kafka's base64", () => {
    const id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
    expect(topicIdFromBytes(topicIdToBytes(id))).toBe(id);
    expect(topicIdToBase64(id)).toHaveLength(22);
    expect(topicIdFromBase64(topicIdToBase64(id))).toBe(id);
    expect(topicIdFromBase64("AAAAAAAAAAAAAAAAAAAAAQ")).toBe("00000000-0000-0000-0000-000000000001");
    expect(() => topicIdToBytes("not-a-uuid")).toThrow(RangeError);
    expect(() => encodeMirrorStateKey({ ...KEY, topicId: "x" })).toThrow(RangeError);
    expect(() =>
      encodeMirrorPartitionStateValue({
        state: "constructor" as "FAILED",
        leaderEpoch: 0,
        stateEpoch: 0,
        errorMessage: null,
        retryAttempt: 0,
        previousState: null,
      }),
    ).toThrow(RangeError);
  });
});
