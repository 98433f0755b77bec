import { CompressionType, encodeEndTxnMarkerBatch, loadCompressionCodecs } from "@cluster-mirror/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import type { SourceCluster } from "../src/ports";
import {
  batchBytes,
  bind,
  drive,
  leaderBatches,
  leaderLog,
  type MirrorEnv,
  mirrorEnv,
  produce,
  TOPIC,
  valuesBatch,
} from "./data-helpers";

beforeAll(async () => {
  await loadCompressionCodecs();
});

/** Data, idempotent, transactional (committed), control and compressed batches on partition 0. */
async function mixedBatches(env: MirrorEnv): Promise<void> {
  await produce(env, valuesBatch(["a", "b", "c"]));
  await produce(env, valuesBatch(["i1", "i2"], { producerId: 7n, producerEpoch: 0, baseSequence: 0 }));
  await produce(
    env,
    valuesBatch(["t1"], { producerId: 9n, producerEpoch: 1, baseSequence: 0, isTransactional: true }),
  );
  env.source.leaderFor(TOPIC, 0).appendControlBatch(
    TOPIC,
    0,
    encodeEndTxnMarkerBatch({
      type: 1,
      producerId: 9n,
      producerEpoch: 1,
      coordinatorEpoch: 0,
      timestamp: 1n,
    }),
  );
  await produce(env, valuesBatch(["g".repeat(300), "z".repeat(300)], { compression: CompressionType.GZIP }));
}

/** True when any stored batch of partition 0 on the destination lies in memory of one on the source. */
function sharesSourceMemory(env: MirrorEnv): boolean {
  const source = leaderBatches(env.source).map((b) => b.buffer);
  return leaderBatches(env.destination).some(({ buffer: d }) =>
    source.some(
      (s) =>
        s.buffer === d.buffer &&
        d.byteOffset < s.byteOffset + s.length &&
        s.byteOffset < d.byteOffset + d.length,
    ),
  );
}

describe("embedded source with copyOnFetch (one copy per fetch, as a socket read)", () => {
  it("marks fetched bytes as the source's own, so the mirror stores a copy of them", async () => {
    const env = mirrorEnv({ sourceOptions: { copyOnFetch: true } });
    await produce(env, valuesBatch(["a"]));
    const response = await env.embeddedSource.fetch({
      clientId: "c",
      brokerId: 0,
      maxBytes: 1 << 20,
      partitions: [
        {
          topic: TOPIC,
          partition: 0,
          fetchOffset: 0n,
          lastFetchedEpoch: -1,
          currentLeaderEpoch: -1,
          maxBytes: 1 << 20,
        },
      ],
    });
    expect(response.partitions[0]?.sharedBytes).toBe(true);
    const plain = mirrorEnv();
    await produce(plain, valuesBatch(["a"]));
    const zeroCopy = await plain.embeddedSource.fetch({
      clientId: "c",
      brokerId: 0,
      maxBytes: 1 << 20,
      partitions: [
        {
          topic: TOPIC,
          partition: 0,
          fetchOffset: 0n,
          lastFetchedEpoch: -1,
          currentLeaderEpoch: -1,
          maxBytes: 1 << 20,
        },
      ],
    });
    expect(zeroCopy.partitions[0]?.sharedBytes).toBeUndefined();
  });

  it("mirrors every kind of batch byte for byte, at the same offsets, into the destination's own memory", async () => {
    const env = mirrorEnv({ sourceOptions: { copyOnFetch: true } });
    await mixedBatches(env);
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(batchBytes(env.destination)).toHaveLength(5);
    expect(leaderLog(env.destination).logEndOffset).toBe(leaderLog(env.source).logEndOffset);
    expect(
      leaderLog(env.destination)
        .producerStateSnapshot()
        .map((p) => p.producerId),
    ).toEqual([7n, 9n]);
    expect(sharesSourceMemory(env)).toBe(false);
  });

  it("shares the source's memory without it (the zero-copy extra), so the check above can tell", async () => {
    const env = mirrorEnv();
    await mixedBatches(env);
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(sharesSourceMemory(env)).toBe(true);
  });

  it("refuses a batch whose CRC fails on the copy, keeps the valid prefix, and fails the partition when it repeats", async () => {
    const damage = (s: SourceCluster): SourceCluster => ({
      ...bind(s),
      fetch: async (request) => {
        const response = await s.fetch(request);
        return {
          ...response,
          partitions: response.partitions.map((p) => {
            if (p.recordSlices.length === 0) return p;
            // The source's bytes stay intact: the damage is in bytes the source hands out as its own.
            const copy = Buffer.concat(p.recordSlices as Buffer[]);
            copy[copy.length - 1]! ^= 0xff;
            return { ...p, recordSlices: [copy] };
          }),
        };
      },
    });
    const env = mirrorEnv({ sourceOptions: { copyOnFetch: true }, wrapSource: damage });
    for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`v${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(leaderLog(env.destination).logEndOffset).toBe(2n);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source).slice(0, 2));
    expect(env.events.failures).toHaveLength(1);
    expect(env.events.failures[0]?.message).toMatch(/corrupt batch twice.*stored CRC/);
  });
});
