import {
  CorruptRecordError,
  decodeMirrorStateRecord,
  encodeMirrorStateRecord,
  type MirrorPartitionStateValue,
  UnsupportedVersionError,
} from "@cluster-mirror/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { foldMirrorState, type LoadedPartitionState } from "../src/coordinator/load-mirror-state";
import { partitionKeyId } from "../src/coordinator/mirror-state-partition";
import type { StateLogRecord } from "../src/ports";

const TOPIC_IDS = ["6ba7b810-9dad-11d1-80b4-00c04fd430c8", "00000000-0000-4000-8000-000000000001"];

/** The fold as it is specified: decode every record whole, then a value replaces and a tombstone deletes. */
function referenceFold(records: readonly StateLogRecord[]): Map<string, LoadedPartitionState> {
  const out = new Map<string, LoadedPartitionState>();
  const tombstoned = new Set<string>();
  for (const r of records) {
    let d: ReturnType<typeof decodeMirrorStateRecord>;
    try {
      d = decodeMirrorStateRecord(r.key, r.value);
    } catch (error) {
      if (error instanceof UnsupportedVersionError) continue;
      throw error;
    }
    const id = partitionKeyId({
      mirror: d.key.mirrorName,
      topicId: d.key.topicId,
      partition: d.key.partition,
    });
    let e = out.get(id);
    const afterTombstone = e === undefined && tombstoned.delete(id);
    if (e === undefined) {
      if (d.value === null) {
        if (d.key.kind === "LastMirrorEpochs") tombstoned.add(id);
        continue;
      }
      e = {
        mirrorName: d.key.mirrorName,
        topicId: d.key.topicId,
        partition: d.key.partition,
        state: null,
        lastMirrorEpoch: -1,
        lastMirrorEpochSinceState: false,
        lastMirrorEpochRecorded: false,
        // A LastMirrorEpochs tombstone that found no entry: the session's, when the state record that opens
        // the entry carries a mirrored epoch (a compacted log), else a deleted mirror's.
        alignedInSession:
          afterTombstone &&
          d.key.kind === "MirrorPartitionState" &&
          (d.value as MirrorPartitionStateValue).leaderEpoch >= 0,
      };
      out.set(id, e);
    }
    if (d.key.kind === "MirrorPartitionState") {
      const v = d.value as MirrorPartitionStateValue | null;
      e.state = v;
      e.lastMirrorEpochSinceState = false;
      // The simulator's alignment rule (packages/sim/src/invariants/alignment.ts).
      if (v === null || v.state === "STOPPED") e.alignedInSession = false;
      if (v?.state === "PREPARING") e.alignedInSession = v.previousState === "FAILED" && e.alignedInSession;
    } else {
      e.lastMirrorEpoch = d.value === null ? -1 : (d.value as { lastMirrorEpoch: number }).lastMirrorEpoch;
      e.lastMirrorEpochSinceState = d.value !== null;
      e.lastMirrorEpochRecorded = d.value !== null;
      e.alignedInSession = d.value === null;
    }
    if (e.state === null && e.lastMirrorEpoch < 0 && !e.lastMirrorEpochRecorded) out.delete(id);
  }
  return out;
}

const stateValue = fc.record({
  state: fc.constantFrom("PREPARING", "MIRRORING", "PAUSED", "STOPPED", "FAILED" as const),
  leaderEpoch: fc.integer({ min: -1, max: 5 }),
  stateEpoch: fc.integer({ min: 0, max: 50 }),
  errorMessage: fc.option(fc.string({ maxLength: 4 }), { nil: null }),
  retryAttempt: fc.integer({ min: -1, max: 3 }),
  previousState: fc.constantFrom(null, "PREPARING", "MIRRORING" as const),
}) as fc.Arbitrary<MirrorPartitionStateValue>;

/** One record of a few partitions: a state, an LME, a tombstone of either, or a key of an unknown type. */
const record = fc.record({
  mirror: fc.constantFrom("m1", "m2"),
  topicId: fc.constantFrom(...TOPIC_IDS),
  partition: fc.integer({ min: 0, max: 2 }),
  what: fc.oneof(
    stateValue.map((v) => ({ kind: "MirrorPartitionState" as const, value: v })),
    fc
      .integer({ min: -1, max: 9 })
      .map((lme) => ({ kind: "LastMirrorEpochs" as const, value: { lastMirrorEpoch: lme } })),
    fc
      .constantFrom("MirrorPartitionState" as const, "LastMirrorEpochs" as const)
      .map((kind) => ({ kind, value: null })),
    fc.constant({ kind: "unknownType" as const, value: null }),
  ),
});

type Rec = typeof record extends fc.Arbitrary<infer T> ? T : never;

/** The records as the engine writes them, at offsets 0, 1, ... */
function encode(from: readonly Rec[]): StateLogRecord[] {
  return from.map((r, i) => {
    const kind = r.what.kind === "unknownType" ? "MirrorPartitionState" : r.what.kind;
    const { key, value } = encodeMirrorStateRecord({
      key: { kind, mirrorName: r.mirror, topicId: r.topicId, partition: r.partition },
      value: r.what.kind === "unknownType" ? null : r.what.value,
    } as Parameters<typeof encodeMirrorStateRecord>[0]);
    // A record type a newer broker may write: the reader skips it.
    if (r.what.kind === "unknownType") key.writeInt16BE(9, 0);
    return { offset: BigInt(i), key, value };
  });
}

/** The fold of one partition's history (`m1`, the first topic id, partition 0). */
function foldOnePartition(whats: Rec["what"][]): LoadedPartitionState | undefined {
  const records = encode(whats.map((what) => ({ mirror: "m1", topicId: TOPIC_IDS[0]!, partition: 0, what })));
  return [...foldMirrorState(records, () => {}).values()][0];
}

describe("foldMirrorState", () => {
  it("folds any history of a few partitions as decoding every record whole does (keys decoded once)", () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 60 }), (rs) => {
        const records = encode(rs);
        expect(foldMirrorState(records, () => {})).toEqual(referenceFold(records));
      }),
    );
  });

  it("tells whether the LME, even -1, was recorded after the last state record (captured by the failover in progress)", () => {
    const at = foldOnePartition;
    const stopping = {
      kind: "MirrorPartitionState" as const,
      value: {
        state: "STOPPING",
        leaderEpoch: 3,
        stateEpoch: 4,
        errorMessage: null,
        retryAttempt: 0,
        previousState: "MIRRORING",
      } as MirrorPartitionStateValue,
    };
    const lme = (n: number) => ({ kind: "LastMirrorEpochs" as const, value: { lastMirrorEpoch: n } });
    const clear = { kind: "LastMirrorEpochs" as const, value: null };
    expect(at([stopping, lme(-1)])).toMatchObject({ lastMirrorEpoch: -1, lastMirrorEpochSinceState: true });
    expect(at([lme(5), stopping])).toMatchObject({ lastMirrorEpoch: 5, lastMirrorEpochSinceState: false });
    expect(at([stopping, lme(2), clear])).toMatchObject({
      lastMirrorEpoch: -1,
      lastMirrorEpochSinceState: false,
    });
  });

  it("tells whether an LME, even -1, is recorded (a value, not a tombstone), in the full and the compacted log", () => {
    const at = foldOnePartition;
    const state = (s: string, previousState: string, stateEpoch: number) => ({
      kind: "MirrorPartitionState" as const,
      value: {
        state: s,
        leaderEpoch: 0,
        stateEpoch,
        errorMessage: null,
        retryAttempt: 0,
        previousState,
      } as MirrorPartitionStateValue,
    });
    const lme = (n: number) => ({ kind: "LastMirrorEpochs" as const, value: { lastMirrorEpoch: n } });
    const clear = { kind: "LastMirrorEpochs" as const, value: null };
    const retried = state("STOPPING", "FAILED", 6);
    // Full history: the failover's LME -1, STOPPED, failed again, its retry's STOPPING.
    const full = [state("STOPPING", "MIRRORING", 3), lme(-1), state("STOPPED", "STOPPING", 4), retried];
    expect(at(full)).toMatchObject({ lastMirrorEpoch: -1, lastMirrorEpochRecorded: true });
    // Compacted: the LME -1 value comes first, before any state record of the key.
    expect(at([lme(-1), retried])).toMatchObject({ lastMirrorEpoch: -1, lastMirrorEpochRecorded: true });
    expect(at([clear, retried])).toMatchObject({ lastMirrorEpoch: -1, lastMirrorEpochRecorded: false });
    expect(at([retried])).toMatchObject({ lastMirrorEpochRecorded: false });
  });

  it("tells whether PREPARING's truncation completed in the current session (its LME tombstone since)", () => {
    const at = (whats: Rec["what"][]) => foldOnePartition(whats)?.alignedInSession;
    const state = (s: string, previousState: string | null) => ({
      kind: "MirrorPartitionState" as const,
      value: {
        state: s,
        leaderEpoch: -1,
        stateEpoch: 4,
        errorMessage: null,
        retryAttempt: 0,
        previousState,
      } as MirrorPartitionStateValue,
    });
    const lme = (n: number) => ({ kind: "LastMirrorEpochs" as const, value: { lastMirrorEpoch: n } });
    const clear = { kind: "LastMirrorEpochs" as const, value: null };
    const failback = [state("STOPPED", "STOPPING"), lme(7), state("PREPARING", "STOPPED")];
    expect(at(failback)).toBe(false); // not truncated yet: the LME 7 serves the cut
    expect(at([...failback, clear])).toBe(true); // truncated, MIRRORING not recorded yet
    expect(at([...failback, clear, state("FAILED", "PREPARING")])).toBe(true);
    expect(at([...failback, clear, state("FAILED", "PREPARING"), state("PREPARING", "FAILED")])).toBe(true);
    expect(at([...failback, state("FAILED", "PREPARING"), state("PREPARING", "FAILED")])).toBe(false);
    expect(at([...failback, clear, state("STOPPING", "PREPARING"), lme(3)])).toBe(false);
    expect(at([...failback, clear, state("MIRRORING", "PREPARING"), state("STOPPED", "STOPPING")])).toBe(
      false,
    );
  });

  it("the compacted log gives the alignment the full history gives, its LME tombstone before the last state record", () => {
    const state = (s: string, previousState: string | null, leaderEpoch: number, stateEpoch: number) => ({
      kind: "MirrorPartitionState" as const,
      value: {
        state: s,
        leaderEpoch,
        stateEpoch,
        errorMessage: s === "FAILED" ? "source unreachable" : null,
        retryAttempt: 0,
        previousState,
      } as MirrorPartitionStateValue,
    });
    const lme = (n: number) => ({ kind: "LastMirrorEpochs" as const, value: { lastMirrorEpoch: n } });
    const clear = { kind: "LastMirrorEpochs" as const, value: null };
    const dropState = { kind: "MirrorPartitionState" as const, value: null };
    /** What the cleaner keeps: the last record of each key, tombstones too, at their offsets. */
    const compacted = (records: StateLogRecord[]) => {
      const last = new Map<string, StateLogRecord>();
      for (const r of records) last.set(r.key.toString("hex"), r);
      return records.filter((r) => last.get(r.key.toString("hex")) === r);
    };
    const both = (whats: Rec["what"][]) => {
      const records = encode(
        whats.map((what) => ({ mirror: "m1", topicId: TOPIC_IDS[0]!, partition: 0, what })),
      );
      return {
        full: foldMirrorState(records, () => {}),
        compacted: foldMirrorState(compacted(records), () => {}),
      };
    };
    const firstStart = [state("PREPARING", "UNKNOWN", -1, 1), clear];
    const failback = [
      state("STOPPED", "STOPPING", 4, 9),
      lme(7),
      state("PREPARING", "STOPPED", -1, 10),
      clear,
    ];
    const histories: [Rec["what"][], boolean][] = [
      // The truncation completed, then the partition failed before MIRRORING was recorded (a retry goes on
      // without truncating again; a failover captures the log's epoch as its LME).
      [[...firstStart, state("FAILED", "PREPARING", 0, 2)], true],
      [[...failback, state("FAILED", "PREPARING", 0, 11), state("PREPARING", "FAILED", 0, 12)], true],
      [[...failback, state("STOPPING", "PREPARING", 0, 11)], true],
      [[...firstStart, state("MIRRORING", "PREPARING", 3, 2), state("FAILED", "MIRRORING", 3, 3)], true],
      // A deleted mirror added again, not truncated yet: its history starts over.
      [
        [
          ...failback,
          state("STOPPED", "STOPPING", 4, 12),
          lme(9),
          dropState,
          clear,
          state("PREPARING", "UNKNOWN", -1, 1),
          state("FAILED", "PREPARING", -1, 2),
        ],
        false,
      ],
      [[...failback, state("STOPPED", "STOPPING", 4, 12), lme(9), dropState, clear], false],
    ];
    for (const [whats, aligned] of histories) {
      const { full, compacted } = both(whats);
      expect(compacted).toEqual(full);
      expect([...full.values()][0]?.alignedInSession ?? false).toBe(aligned);
    }
  });

  it("refuses a corrupt record whose partition's key decoded before, naming its offset", () => {
    const [first, second] = encode([
      {
        mirror: "m1",
        topicId: TOPIC_IDS[0]!,
        partition: 0,
        what: { kind: "LastMirrorEpochs", value: { lastMirrorEpoch: 3 } },
      },
      {
        mirror: "m1",
        topicId: TOPIC_IDS[0]!,
        partition: 0,
        what: { kind: "LastMirrorEpochs", value: { lastMirrorEpoch: 4 } },
      },
    ]);
    // The same key, with a value cut short.
    const corrupt = { offset: 7n, key: second!.key, value: second!.value!.subarray(0, 3) };
    expect(() => foldMirrorState([first!, corrupt], () => {})).toThrow(CorruptRecordError);
    expect(() => foldMirrorState([first!, corrupt], () => {})).toThrow(/offset 7/);
  });

  it("skips a record of an unknown type with a warning each time, even when its partition loaded", () => {
    const rs = encode([
      {
        mirror: "m1",
        topicId: TOPIC_IDS[0]!,
        partition: 0,
        what: { kind: "LastMirrorEpochs", value: { lastMirrorEpoch: 3 } },
      },
      { mirror: "m1", topicId: TOPIC_IDS[0]!, partition: 0, what: { kind: "unknownType", value: null } },
      { mirror: "m1", topicId: TOPIC_IDS[0]!, partition: 0, what: { kind: "unknownType", value: null } },
    ]);
    const warnings: string[] = [];
    const folded = foldMirrorState(rs, (w) => warnings.push(w));
    expect(warnings).toHaveLength(2);
    expect([...folded.values()].map((e) => e.lastMirrorEpoch)).toEqual([3]);
  });
});
