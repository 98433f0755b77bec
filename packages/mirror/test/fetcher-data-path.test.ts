import {
  CompressionType,
  encodeEndTxnMarkerBatch,
  loadCompressionCodecs,
  recordBatches,
} from "@cluster-mirror/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import type { SourceCluster, SourceFetchPartitionResult } from "../src/ports";
import { batchBytes, bind, drive, leaderLog, mirrorEnv, produce, TOPIC, valuesBatch } from "./data-helpers";

beforeAll(async () => {
  await loadCompressionCodecs();
});

/** A source whose fetch answers pass through `rewrite`, partition by partition (to damage or cut them). */
function mapFetchedPartitions(
  rewrite: (p: SourceFetchPartitionResult) => SourceFetchPartitionResult,
): (s: SourceCluster) => SourceCluster {
  return (s) => ({
    ...bind(s),
    fetch: async (request) => {
      const response = await s.fetch(request);
      return { ...response, partitions: response.partitions.map(rewrite) };
    },
  });
}

describe("mirror fetcher data path", () => {
  it("mirrors every kind of batch byte for byte, at the same offsets", async () => {
    const env = mirrorEnv();
    await produce(env, valuesBatch(["a", "b", "c"]));
    await produce(env, valuesBatch(["i1", "i2"], { producerId: 7n, producerEpoch: 0, baseSequence: 0 }));
    await produce(env, valuesBatch(["i3"], { producerId: 7n, producerEpoch: 0, baseSequence: 2 }));
    await produce(
      env,
      valuesBatch(["t1", "t2"], { producerId: 9n, producerEpoch: 1, baseSequence: 0, isTransactional: true }),
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
    await produce(
      env,
      valuesBatch(["t3"], { producerId: 10n, producerEpoch: 0, baseSequence: 0, isTransactional: true }),
    );
    env.source.leaderFor(TOPIC, 0).appendControlBatch(
      TOPIC,
      0,
      encodeEndTxnMarkerBatch({
        type: 0,
        producerId: 10n,
        producerEpoch: 0,
        coordinatorEpoch: 0,
        timestamp: 2n,
      }),
    );
    await produce(
      env,
      valuesBatch(["g".repeat(500), "z".repeat(500)], { compression: CompressionType.GZIP }),
    );
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(batchBytes(env.destination)).toHaveLength(8);
    expect(leaderLog(env.destination).logEndOffset).toBe(leaderLog(env.source).logEndOffset);
    expect(env.manager.offsets(env.key())).toEqual({
      sourceHighWatermark: leaderLog(env.source).highWatermark,
      destinationLogEndOffset: leaderLog(env.source).logEndOffset,
    });
    const m = env.manager.metrics();
    expect(m.batchesMirrored).toBe(8);
    expect(m.bytesMirrored).toBe(batchBytes(env.source).reduce((n, [, hex]) => n + hex.length / 2, 0));
    expect(m.partitions[0]?.lag).toBe(0n);
    expect(env.events.failures).toEqual([]);
    // Producer state came from the batch headers: the open-transaction set matches the source's.
    expect(leaderLog(env.destination).ongoingTransactions()).toEqual(
      leaderLog(env.source).ongoingTransactions(),
    );
  });

  it("copies compacted segments with their offset gaps", async () => {
    const env = mirrorEnv({ sourceConfigs: { "cleanup.policy": "compact", "segment.bytes": "200" } });
    for (let i = 0; i < 12; i++) await produce(env, valuesBatch([`v${i}`], {}, [`k${i % 3}`]));
    const log = leaderLog(env.source);
    log.compact();
    const offsets = [...log.batches()].map((b) => b.baseOffset);
    expect(offsets.length).toBeLessThan(12);
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(leaderLog(env.destination).logEndOffset).toBe(12n);
  });

  it("keeps mirroring new batches as the source grows", async () => {
    const env = mirrorEnv();
    env.manager.addPartition(env.key());
    await drive(env, 10);
    for (let i = 0; i < 5; i++) {
      await produce(env, valuesBatch([`x${i}`]));
      await drive(env, 600);
    }
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(env.manager.metrics().fetchers[0]?.clientId).toBe("cluster-mirror-m1-broker-0-fetcher-0");
  });

  it("stops at a partial trailing batch and resumes from it", async () => {
    let cut = true;
    let slicesSeen = 0;
    const env = mirrorEnv({
      wrapSource: mapFetchedPartitions((p) => {
        if (!cut || p.recordSlices.length === 0) return p;
        cut = false;
        slicesSeen = p.recordSlices.length;
        const last = p.recordSlices[p.recordSlices.length - 1]!;
        return { ...p, recordSlices: [...p.recordSlices.slice(0, -1), last.subarray(0, last.length - 7)] };
      }),
    });
    for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`p${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 1);
    // The embedded source answers with views of its three stored appends, not one joined copy.
    expect(slicesSeen).toBe(3);
    await drive(env, 1000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
  });

  it("treats out-of-order batches and a wrong magic as corrupt: fetched again, and failed when they repeat", async () => {
    // Partition 0 gets its 2nd and 3rd batches swapped once; partition 1 always gets a bad magic byte.
    let swapped = 0;
    const env = mirrorEnv({
      sourceAssignment: [[0], [0]],
      wrapSource: mapFetchedPartitions((p) => {
        const slices = p.recordSlices as Buffer[];
        if (p.partition === 0 && swapped === 0 && slices.length === 3) {
          swapped++;
          return { ...p, recordSlices: [slices[0]!, slices[2]!, slices[1]!] };
        }
        if (p.partition === 1 && slices.length > 0) {
          const copy = Buffer.concat(slices);
          copy[16] = 1; // magic of the first batch
          return { ...p, recordSlices: [copy] };
        }
        return p;
      }),
    });
    for (let i = 0; i < 3; i++) {
      await produce(env, valuesBatch([`o${i}`]), 0);
      await produce(env, valuesBatch([`m${i}`]), 1);
    }
    env.manager.addPartition(env.key(0));
    env.manager.addPartition(env.key(1));
    await drive(env, 1000);
    expect(swapped).toBe(1);
    // Nothing of the out-of-order response was kept (not even batch 2 after 0, a gap it could not tell
    // from a compacted source's): the next fetch brought all three in order.
    expect(batchBytes(env.destination, 0)).toEqual(batchBytes(env.source, 0));
    expect(leaderLog(env.destination, 1).logEndOffset).toBe(0n);
    expect(env.events.failures.map((f) => [f.key.partition, f.retryable])).toEqual([[1, true]]);
    expect(env.events.failures[0]?.message).toMatch(/corrupt batch twice.*magic 1/);
  });

  it("treats a slice that ends inside a batch (not the last one) as corrupt and fetches again", async () => {
    let damaged = 0;
    const env = mirrorEnv({
      wrapSource: mapFetchedPartitions((p) => {
        if (damaged > 0 || p.recordSlices.length < 2) return p;
        damaged++;
        // Move the first slice's last 5 bytes to the front of the second: same bytes, bad boundary.
        const [a, b, ...rest] = p.recordSlices as Buffer[];
        const moved = [a!.subarray(0, a!.length - 5), Buffer.concat([a!.subarray(a!.length - 5), b!])];
        return { ...p, recordSlices: [...moved, ...rest] };
      }),
    });
    for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`s${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(damaged).toBe(1);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(env.events.failures).toEqual([]);
  });

  it("holds a batch above the local leader epoch until the epoch is bumped", async () => {
    const env = mirrorEnv();
    await produce(env, valuesBatch(["e0"]));
    env.manager.addPartition(env.key());
    await drive(env, 100);
    env.source.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 5 }]);
    await produce(env, valuesBatch(["e5"]));
    env.events.epochs.length = 0;
    await drive(env, 3000);
    expect(leaderLog(env.destination).logEndOffset).toBe(1n);
    expect(env.events.epochs.some((e) => e.batchEpoch === 5 && e.localLeaderEpoch === 0)).toBe(true);
    // The coordinator's EPOCH_FENCING: hold, bump the destination epoch above the batch's, release.
    env.manager.holdAppends(env.key());
    env.destination.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 15 }]);
    await drive(env, 1000);
    expect(leaderLog(env.destination).logEndOffset).toBe(1n);
    env.manager.releaseAppends(env.key());
    await drive(env, 1000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(
      [...recordBatches(Buffer.from(batchBytes(env.destination)[1]![1], "hex"))][0]?.partitionLeaderEpoch,
    ).toBe(5);
  });

  it("fails only the partition whose batch is corrupt, after fetching it again", async () => {
    const env = mirrorEnv({
      sourceAssignment: [[0], [0]],
      wrapSource: mapFetchedPartitions((p) => {
        if (p.partition !== 1 || p.recordSlices.length === 0) return p;
        const copy = Buffer.concat(p.recordSlices as Buffer[]);
        copy[copy.length - 1]! ^= 0xff; // in the last batch's records: its CRC no longer matches
        return { ...p, recordSlices: [copy] };
      }),
    });
    for (let i = 0; i < 3; i++) {
      await produce(env, valuesBatch([`a${i}`]), 0);
      await produce(env, valuesBatch([`b${i}`]), 1);
    }
    env.manager.addPartition(env.key(0));
    env.manager.addPartition(env.key(1));
    await drive(env, 100);
    expect(batchBytes(env.destination, 0)).toEqual(batchBytes(env.source, 0));
    // Partition 1 keeps the valid prefix (two batches), then fails: retryable, once.
    expect(leaderLog(env.destination, 1).logEndOffset).toBe(2n);
    expect(env.events.failures).toHaveLength(1);
    expect(env.events.failures[0]).toMatchObject({ key: env.key(1), retryable: true });
    expect(env.events.failures[0]?.message).toMatch(/corrupt/);
    await produce(env, valuesBatch(["a3"]), 0);
    await drive(env, 1000);
    expect(batchBytes(env.destination, 0)).toEqual(batchBytes(env.source, 0));
  });

  it("removePartition resolves only once the in-flight fetch has settled, and nothing is appended after", async () => {
    let release: (() => void) | undefined;
    const env = mirrorEnv({
      wrapSource: (s): SourceCluster => ({
        ...bind(s),
        fetch: async (request) => {
          const response = await s.fetch(request);
          await new Promise<void>((resolve) => {
            release = resolve;
          });
          return response;
        },
      }),
    });
    await produce(env, valuesBatch(["r0"]));
    env.manager.addPartition(env.key());
    await drive(env, 1);
    expect(release).toBeDefined();
    let removed = false;
    void env.manager.removePartition(env.key()).then(() => {
      removed = true;
    });
    await drive(env, 10);
    expect(removed).toBe(false);
    release!();
    await drive(env, 10);
    expect(removed).toBe(true);
    expect(leaderLog(env.destination).logEndOffset).toBe(0n);
    expect(env.manager.metrics().fetchers[0]?.partitions).toEqual([]);
  });
});
