import { addLogRewrite, ClusterError, MAX_LOG_REWRITES } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { compareRewrittenRanges, uncheckedLogRewrites } from "../src/fetcher/log-rewrite-check";
import type { LocalReplica, SourceCluster, SourceFetchPartitionResult, SourceLogRewrite } from "../src/ports";
import { valuesBatch } from "./data-helpers";

/** A batch of one record at `offset` with `value` (its bytes differ with the value). */
const batch = (offset: bigint, value: string, epoch = 10): Buffer =>
  valuesBatch([value], { baseOffset: offset, partitionLeaderEpoch: epoch });

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
): SourceCluster & { fetched: bigint[]; inSession: number } {
  const logStart = options.logStart ?? 0n;
  const end = BigInt(batches.length);
  const fetched: bigint[] = [];
  const out = {
    fetched,
    inSession: 0,
    fetch: async (request: Parameters<SourceCluster["fetch"]>[0]) => {
      const p = request.partitions[0]!;
      fetched.push(p.fetchOffset);
      if (request.sessionless !== true) out.inSession++;
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
  };
  return out as unknown as SourceCluster & { fetched: bigint[]; inSession: number };
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
    expect(await compareRewrittenRanges(target(source), copy, [cut(1n, 3n)])).toEqual({});
    // Only the rewritten range is read, from the cut on.
    expect(source.fetched).toEqual([1n]);
    // Outside the fetcher's fetch session (same client id and broker): a one-partition fetch in it would
    // make the source forget the session's other partitions, all sent again on the next round.
    expect(source.inSession).toBe(0);
  });

  it("cuts at the first batch that differs, even of the same epoch and offset", async () => {
    const copy = replicaOf([...common, batch(2n, "old"), batch(3n, "old too")]);
    const source = sourceOf([...common, batch(2n, "new"), batch(3n, "new too")]);
    expect(await compareRewrittenRanges(target(source), copy, [cut(2n, 4n)])).toEqual({ cut: 2n });
  });

  it("keeps what the source holds nothing of yet, and says where to compare from once it does", async () => {
    const copy = replicaOf([...common, batch(2n, "c"), batch(3n, "d")]);
    // Shorter: the copy's batches past the source's end may come back as they are (a source re-copying).
    const shorter = sourceOf([...common, batch(2n, "c")]);
    expect(await compareRewrittenRanges(target(shorter), copy, [cut(2n, 4n)])).toEqual({ pendingFrom: 3n });
    expect(await compareRewrittenRanges(target(sourceOf(common)), copy, [cut(0n, 4n)])).toEqual({
      pendingFrom: 2n,
    });
    // Compared again from there once the source holds more: the same batch agrees, another differs.
    const refilled = sourceOf([...common, batch(2n, "c"), batch(3n, "other")]);
    expect(await compareRewrittenRanges(target(refilled), copy, [cut(0n, 4n)], 3n)).toEqual({ cut: 3n });
    expect(refilled.fetched).toEqual([3n]);
    const same = sourceOf([...common, batch(2n, "c"), batch(3n, "d")]);
    expect(await compareRewrittenRanges(target(same), copy, [cut(0n, 4n)], 2n)).toEqual({});
  });

  it("compares nothing past the log end the cut removed, nor below the source's log start", async () => {
    const copy = replicaOf([...common, batch(2n, "c"), batch(3n, "fetched after the cut")]);
    const source = sourceOf([...common, batch(2n, "c"), batch(3n, "not what the copy holds")]);
    // The cut removed offsets 1..2 only: offset 3 was fetched since (a plain divergence is KIP-320's).
    expect(await compareRewrittenRanges(target(source), copy, [cut(1n, 3n)])).toEqual({});
    const trimmed = sourceOf([...common, batch(2n, "other")], { logStart: 2n });
    const held = replicaOf([batch(0n, "retained here only"), common[1]!, batch(2n, "c")]);
    expect(await compareRewrittenRanges(target(trimmed), held, [cut(0n, 3n)])).toEqual({ cut: 2n });
    expect(trimmed.fetched).toEqual([0n, 2n]);
  });

  it("merges overlapping cuts and reports the lowest difference among them", async () => {
    const copy = replicaOf([batch(0n, "a"), batch(1n, "b"), batch(2n, "x"), batch(3n, "d"), batch(4n, "y")]);
    const source = sourceOf([batch(0n, "a"), batch(1n, "b"), batch(2n, "c"), batch(3n, "d"), batch(4n, "e")]);
    const rewrites = [cut(3n, 5n, 1), cut(1n, 4n, 2)];
    expect(await compareRewrittenRanges(target(source), copy, rewrites)).toEqual({ cut: 2n });
  });

  it("throws what the source answers other than OFFSET_OUT_OF_RANGE (the check is made again later)", async () => {
    const failing = sourceOf(common, { error: new KafkaError("NOT_LEADER_OR_FOLLOWER", 6, true, "moved") });
    await expect(compareRewrittenRanges(target(failing), replicaOf(common), [cut(0n, 2n)])).rejects.toThrow(
      "moved",
    );
  });

  it("asks only for cuts newer than the last compared that start below the local log end", () => {
    const rewrites = [cut(0n, 5n, 3), cut(7n, 9n, 5), cut(2n, 4n, 8)];
    expect(uncheckedLogRewrites(rewrites, 3, 6n)).toEqual({ unchecked: [rewrites[2]], newestId: 8 });
    expect(uncheckedLogRewrites(rewrites, 8, 6n)).toEqual({ unchecked: [], newestId: 8 });
    expect(uncheckedLogRewrites(undefined, -1, 6n)).toEqual({ unchecked: [], newestId: -1 });
  });
});

describe("a partition's log rewrites in the metadata", () => {
  it("keeps at most MAX_LOG_REWRITES, merging the two closest ranges into the one covering both", () => {
    let rewrites = addLogRewrite(undefined, { id: 1, offset: 0n, endOffset: 10n });
    for (let id = 2; id <= MAX_LOG_REWRITES; id++)
      rewrites = addLogRewrite(rewrites, {
        id,
        offset: BigInt(id) * 1000n,
        endOffset: BigInt(id) * 1000n + 5n,
      });
    expect(rewrites).toHaveLength(MAX_LOG_REWRITES);
    // Overlapping the range of id 3 (3000..3005): merged with it, not with the oldest far below.
    rewrites = addLogRewrite(rewrites, { id: 99, offset: 3003n, endOffset: 3100n });
    expect(rewrites).toHaveLength(MAX_LOG_REWRITES);
    expect(rewrites[0]).toEqual({ id: 1, offset: 0n, endOffset: 10n });
    expect(rewrites.find((r) => r.id === 99)).toEqual({ id: 99, offset: 3000n, endOffset: 3100n });
    expect(rewrites.some((r) => r.id === 3)).toBe(false);
    // An unknown end reaches everything above it: merged first, and the merge's end stays unknown.
    rewrites = addLogRewrite(rewrites, { id: 100, offset: 7002n, endOffset: undefined });
    expect(rewrites.find((r) => r.id === 100)).toEqual({ id: 100, offset: 7000n, endOffset: undefined });
  });
});
