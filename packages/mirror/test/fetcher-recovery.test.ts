import { describe, expect, it } from "vitest";
import type { SourceCluster } from "../src/ports";
import { batchBytes, bind, drive, leaderLog, mirrorEnv, produce, TOPIC, valuesBatch } from "./data-helpers";

describe("mirror fetcher recovery", () => {
  it("truncates the destination where the source diverged (source truncation) and mirrors again", async () => {
    const env = mirrorEnv();
    for (let i = 0; i < 5; i++) await produce(env, valuesBatch([`old${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(leaderLog(env.destination).logEndOffset).toBe(5n);
    // The source loses its tail (as after an unclean election) and writes new data at a higher epoch.
    env.source.leaderFor(TOPIC, 0).truncateTo(TOPIC, 0, 3n);
    env.source.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 1 }]);
    env.destination.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 10 }]);
    for (let i = 0; i < 4; i++) await produce(env, valuesBatch([`new${i}`]));
    await drive(env, 3000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(leaderLog(env.destination).logEndOffset).toBe(7n);
    expect(env.events.failures).toEqual([]);
  });

  it("follows an unclean election on the source: the divergent tail is replaced", async () => {
    const env = mirrorEnv({
      sourceBrokers: 2,
      sourceAssignment: [[0, 1]],
      sourceConfigs: { "unclean.leader.election.enable": "true" },
    });
    for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`c${i}`]));
    await drive(env, 100);
    env.source.controller.alterPartition(TOPIC, 0, { leader: 0, leaderEpoch: 0, isr: [0] });
    env.source.setReachable(1, false);
    for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`lost${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(leaderLog(env.destination).logEndOffset).toBe(6n);
    env.source.setReachable(1, true);
    env.source.crashBroker(0); // broker 1, out of sync, is elected (unclean) at epoch 1
    env.destination.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 10 }]);
    for (let i = 0; i < 2; i++) await produce(env, valuesBatch([`after${i}`]));
    await drive(env, 5000);
    expect(env.source.controller.image.partition(TOPIC, 0)?.leader).toBe(1);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(leaderLog(env.destination).logEndOffset).toBe(5n);
  });

  it("restarts at the source log start after DeleteRecords (OFFSET_OUT_OF_RANGE)", async () => {
    const env = mirrorEnv();
    for (let i = 0; i < 5; i++) await produce(env, valuesBatch([`d${i}a`, `d${i}b`]));
    // Offset 7 is inside the batch [6, 7]: the destination stores that batch whole from its base offset, and
    // its log start then follows the source's (7), as Kafka's follower does.
    env.source.leaderFor(TOPIC, 0).deleteRecords(TOPIC, 0, 7n);
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source, 0, 6n));
    expect(leaderLog(env.destination).logStartOffset).toBe(7n);
    expect(leaderLog(env.destination).logEndOffset).toBe(10n);
    // Later, while mirroring, the source's log start passes the destination's end.
    env.manager.holdAppends(env.key());
    for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`e${i}`]));
    env.source.leaderFor(TOPIC, 0).deleteRecords(TOPIC, 0, 12n);
    env.manager.releaseAppends(env.key());
    await drive(env, 1000);
    expect(leaderLog(env.destination).logStartOffset).toBe(12n);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source, 0, 12n));
    expect(env.events.failures).toEqual([]);
  });

  it("checks the first batch's CRC before its offsets move an empty log to the batch's base", async () => {
    // Log start 7 falls inside the batch [6, 7]; that batch arrives corrupt once. The local log must not
    // be restarted at 6 on the strength of a batch that fails its CRC: it is fetched again from 7.
    const requested: bigint[] = [];
    let damaged = false;
    const env = mirrorEnv({
      wrapSource: (s): SourceCluster => ({
        ...bind(s),
        fetch: async (request) => {
          for (const p of request.partitions) requested.push(p.fetchOffset);
          const response = await s.fetch(request);
          return {
            ...response,
            partitions: response.partitions.map((p) => {
              if (damaged || p.recordSlices.length === 0 || requested.at(-1) !== 7n) return p;
              damaged = true;
              const copy = Buffer.concat(p.recordSlices as Buffer[]);
              copy[40]! ^= 0xff; // the first batch's timestamps: its CRC no longer matches
              return { ...p, recordSlices: [copy] };
            }),
          };
        },
      }),
    });
    for (let i = 0; i < 5; i++) await produce(env, valuesBatch([`d${i}a`, `d${i}b`]));
    env.source.leaderFor(TOPIC, 0).deleteRecords(TOPIC, 0, 7n);
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(damaged).toBe(true);
    const afterReset = requested.slice(requested.indexOf(7n));
    expect(afterReset.filter((o) => o < 7n)).toEqual([]);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source, 0, 6n));
    // Stored whole from 6; the log start is the source's.
    expect(leaderLog(env.destination).logStartOffset).toBe(7n);
    expect(env.events.failures).toEqual([]);
  });

  it("re-routes a partition when its source leader moves (asking the source for its own topic's leaders)", async () => {
    const lookups: string[][] = [];
    let described = 0;
    const env = mirrorEnv({
      sourceBrokers: 2,
      sourceAssignment: [[0, 1]],
      wrapSource: (s): SourceCluster => ({
        ...bind(s),
        partitionLeaders: (topics) => {
          lookups.push([...topics]);
          return s.partitionLeaders(topics);
        },
        describeTopics: () => {
          described++;
          return s.describeTopics();
        },
      }),
    });
    env.source.controller.createTopic({ name: "not-mirrored", replicaAssignment: [[0]] });
    for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`m${i}`]));
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(env.manager.metrics().fetchers.map((f) => [f.sourceBrokerId, f.partitions])).toEqual([
      [0, ["orders-0"]],
    ]);
    // Leader 0 crashes: the whole fetch fails, metadata is refreshed, the partition moves to broker 1.
    env.source.crashBroker(0);
    env.destination.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 10 }]);
    await produce(env, valuesBatch(["on-1"]));
    await drive(env, 3000);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    const owner = env.manager.metrics().fetchers.find((f) => f.partitions.includes("orders-0"));
    expect(owner?.sourceBrokerId).toBe(1);
    // Broker 0 returns and takes leadership back: broker 1 answers NOT_LEADER_OR_FOLLOWER, it moves again.
    env.source.startBroker(0);
    await drive(env, 2000);
    env.source.controller.electPreferredLeaders();
    await produce(env, valuesBatch(["on-0"]));
    await drive(env, 3000);
    expect(env.source.controller.image.partition(TOPIC, 0)?.leader).toBe(0);
    expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    expect(
      env.manager.metrics().fetchers.find((f) => f.partitions.includes("orders-0"))?.sourceBrokerId,
    ).toBe(0);
    expect(env.events.failures).toEqual([]);
    // Each route asked for the mirrored topic alone: no full description (topics and configs) of the source.
    expect(lookups.length).toBeGreaterThanOrEqual(3);
    expect(new Set(lookups.map((l) => l.join(",")))).toEqual(new Set([TOPIC]));
    expect(described).toBe(0);
  });
});
