import { addLogRewrite, ClusterError, MAX_LOG_REWRITES } from "@cluster-mirror/cluster";
import { encodeRecordBatch, KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { logRewriteTruncationOffset, uncheckedLogRewrites } from "../src/fetcher/log-rewrite-check";
import type { LocalReplica, SourceCluster, SourceFetchPartitionResult, SourceLogRewrite } from "../src/ports";

/** A batch of one record at `offset` with `value` (its bytes differ with the value). */
function batch(offset: bigint, value: string, epoch = 10): Buffer {
  return encodeRecordBatch({
    baseOffset: offset,
    partitionLeaderEpoch: epoch,
    records: [
      {
        attributes: 0,
        offsetDelta: 0,
        timestampDelta: 0n,
        key: null,
        value: Buffer.from(value),
        headers: [],
      },
    ],
  });
}

/** Slices from the batch holding `offset` on, as a log read gives them (one slice of whole batches). */
function readFrom(batches: readonly Buffer[], offset: bigint): Buffer[] {
  const from = batches.findIndex((b) => b.readBigInt64BE(0) >= offset);
  return from < 0 ? [] : [Buffer.concat(batches.slice(from))];
}

/** A destination replica over `batches` (one-record batches from `start`). */
function replicaOf(batches: readonly Buffer[], start = 0n): LocalReplica {
  return {
    logStartOffset: () => start,
    logEndOffset: () => start + BigInt(batches.length),
    read: (offset: bigint) => readFrom(batches, offset),
  } as unknown as LocalReplica;
}

/** A source answering fetches from `batches` up to `highWatermark`, or with `error`. */
function sourceOf(
  batches: readonly Buffer[],
  options: { logStart?: bigint; error?: KafkaError } = {},
): SourceCluster & { fetched: bigint[] } {
  const logStart = options.logStart ?? 0n;
  const end = BigInt(batches.length);
  const fetched: bigint[] = [];
  return {
    fetched,
    fetch: async (request: Parameters<SourceCluster["fetch"]>[0]) => {
      const p = request.partitions[0]!;
      fetched.push(p.fetchOffset);
      const base = { topic: p.topic, partition: p.partition, highWatermark: end, lastStableOffset: end };
      let answer: SourceFetchPartitionResult;
      if (options.error)
        answer = { ...base, logStartOffset: logStart, recordSlices: [], error: options.error };
      else if (p.fetchOffset < logStart || p.fetchOffset > end) {
        answer = {
          ...base,
          logStartOffset: logStart,
          recordSlices: [],
          error: new ClusterError("OFFSET_OUT_OF_RANGE", `offset ${p.fetchOffset} out of range`),
        };
      } else answer = { ...base, logStartOffset: logStart, recordSlices: readFrom(batches, p.fetchOffset) };
      return { throttleTimeMs: 0, partitions: [answer] };
    },
  } as unknown as SourceCluster & { fetched: bigint[] };
}

const target = (source: SourceCluster) => ({
  source,
  clientId: "c",
  brokerId: 0,
  topic: "orders",
  partition: 0,
  topicId: "00000000-0000-0000-0000-000000000001",
});

const cut = (offset: bigint, endOffset: bigint | undefined, id = 1): SourceLogRewrite => ({
  id,
  offset,
  endOffset,
});

describe("comparing a copy with its source where the source's mirror cut its log", () => {
  const common = [batch(0n, "a"), batch(1n, "b")];

  it("finds nothing to cut when the copy holds what the source holds", async () => {
    const copy = replicaOf([...common, batch(2n, "c")]);
    const source = sourceOf([...common, batch(2n, "c")]);
    expect(await logRewriteTruncationOffset(target(source), copy, [cut(1n, 3n)])).toBeUndefined();
    // Only the rewritten range is read, from the cut on.
    expect(source.fetched).toEqual([1n]);
  });

  it("cuts at the first batch that differs, even of the same epoch and offset", async () => {
    const copy = replicaOf([...common, batch(2n, "old"), batch(3n, "old too")]);
    const source = sourceOf([...common, batch(2n, "new"), batch(3n, "new too")]);
    expect(await logRewriteTruncationOffset(target(source), copy, [cut(2n, 4n)])).toBe(2n);
  });

  it("cuts where the source holds nothing now (shorter, or out of range past its end)", async () => {
    const copy = replicaOf([...common, batch(2n, "c"), batch(3n, "d")]);
    expect(
      await logRewriteTruncationOffset(target(sourceOf([...common, batch(2n, "c")])), copy, [cut(2n, 4n)]),
    ).toBe(3n);
    expect(await logRewriteTruncationOffset(target(sourceOf(common)), copy, [cut(0n, 4n)])).toBe(2n);
    expect(await logRewriteTruncationOffset(target(sourceOf([common[0]!])), copy, [cut(1n, 4n)])).toBe(1n);
  });

  it("compares nothing past the log end the cut removed, nor below the source's log start", async () => {
    const copy = replicaOf([...common, batch(2n, "c"), batch(3n, "fetched after the cut")]);
    const source = sourceOf([...common, batch(2n, "c"), batch(3n, "not what the copy holds")]);
    // The cut removed offsets 1..2 only: offset 3 was fetched since (a plain divergence is KIP-320's).
    expect(await logRewriteTruncationOffset(target(source), copy, [cut(1n, 3n)])).toBeUndefined();
    const trimmed = sourceOf([...common, batch(2n, "other")], { logStart: 2n });
    const held = replicaOf([batch(0n, "retained here only"), common[1]!, batch(2n, "c")]);
    expect(await logRewriteTruncationOffset(target(trimmed), held, [cut(0n, 3n)])).toBe(2n);
    expect(trimmed.fetched).toEqual([0n, 2n]);
  });

  it("merges overlapping cuts and reports the lowest difference among them", async () => {
    const copy = replicaOf([batch(0n, "a"), batch(1n, "b"), batch(2n, "x"), batch(3n, "d"), batch(4n, "y")]);
    const source = sourceOf([batch(0n, "a"), batch(1n, "b"), batch(2n, "c"), batch(3n, "d"), batch(4n, "e")]);
    const rewrites = [cut(3n, 5n, 1), cut(1n, 4n, 2)];
    expect(await logRewriteTruncationOffset(target(source), copy, rewrites)).toBe(2n);
  });

  it("throws what the source answers other than OFFSET_OUT_OF_RANGE (the check is made again later)", async () => {
    const failing = sourceOf(common, { error: new KafkaError("NOT_LEADER_OR_FOLLOWER", 6, true, "moved") });
    await expect(
      logRewriteTruncationOffset(target(failing), replicaOf(common), [cut(0n, 2n)]),
    ).rejects.toThrow("moved");
  });

  it("asks only for cuts newer than the last compared that start below the local log end", () => {
    const rewrites = [cut(0n, 5n, 3), cut(7n, 9n, 5), cut(2n, 4n, 8)];
    expect(uncheckedLogRewrites(rewrites, 3, 6n)).toEqual({ unchecked: [rewrites[2]], newestId: 8 });
    expect(uncheckedLogRewrites(rewrites, 8, 6n)).toEqual({ unchecked: [], newestId: 8 });
    expect(uncheckedLogRewrites(undefined, -1, 6n)).toEqual({ unchecked: [], newestId: -1 });
  });
});

describe("a partition's log rewrites in the metadata", () => {
  it("keeps at most MAX_LOG_REWRITES, the two oldest merged into the range covering both", () => {
    let rewrites = addLogRewrite(undefined, { id: 1, offset: 5n, endOffset: 9n });
    rewrites = addLogRewrite(rewrites, { id: 2, offset: 3n, endOffset: 7n });
    for (let id = 3; id <= MAX_LOG_REWRITES; id++)
      rewrites = addLogRewrite(rewrites, { id, offset: 100n, endOffset: 101n });
    expect(rewrites).toHaveLength(MAX_LOG_REWRITES);
    rewrites = addLogRewrite(rewrites, { id: 99, offset: 200n, endOffset: undefined });
    expect(rewrites).toHaveLength(MAX_LOG_REWRITES);
    expect(rewrites[0]).toEqual({ id: 2, offset: 3n, endOffset: 9n });
    expect(rewrites.at(-1)).toEqual({ id: 99, offset: 200n, endOffset: undefined });
    // An unknown end merged in stays unknown: as far as any copy reaches.
    let unknown = addLogRewrite(undefined, { id: 1, offset: 4n, endOffset: undefined });
    for (let id = 2; id <= MAX_LOG_REWRITES + 1; id++)
      unknown = addLogRewrite(unknown, { id, offset: 2n, endOffset: 3n });
    expect(unknown[0]).toEqual({ id: 2, offset: 2n, endOffset: undefined });
  });
});
