import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { tombstones } from "../src/coordinator/state-records";
import { EmbeddedStateLog, MIRROR_STATE_TOPIC } from "../src/destination/embedded-state-log";
import { mirrorEnv, recordBatch, TOPIC } from "./core-helpers";

/**
 * A partition re-added after a failover, whose PREPARING truncated its log to its own LME (5) and then
 * failed for good before MIRRORING (waiting for the ISR): its log is a copy of the source up to epoch 5.
 * `compact`: every `__mirror_state` append goes to a segment of its own, so the cleaner keeps only the last
 * record of each key (tombstones too).
 */
async function failedAfterTruncation(compact: boolean) {
  const env = await mirrorEnv({ statePartitions: 1 });
  if (compact) {
    env.dest.controller.incrementalAlterConfigs({ type: "topic", name: MIRROR_STATE_TOPIC }, [
      { name: "segment.bytes", op: "SET", value: "14" },
    ]);
  }
  const key = await env.createTopic(5);
  await env.produceToSource(["a", "b"]);
  await env.startThenStop(key, { copy: true });
  expect(env.stateOf(key)).toMatchObject({ state: "STOPPED", lastMirrorEpoch: 5 });
  const leader = env.destination.leaderOf(TOPIC, 0);
  await env.dest
    .broker(leader)!
    .produce({ topic: TOPIC, partition: 0, acks: 1, batch: recordBatch(["local"]) });
  env.destination.hooks.beforeFollowersTruncated = () => {
    throw new KafkaError("INVALID_REPLICA_ASSIGNMENT", 39, false, "test: the ISR cannot be checked");
  };
  void env.router.command(key, { type: "START" }).catch(() => {});
  await env.settle(1000);
  env.destination.hooks = {};
  expect(env.stateOf(key)).toMatchObject({
    state: "FAILED",
    previousState: "PREPARING",
    retryAttempt: -1,
    lastMirrorEpoch: -1,
  });
  if (compact) {
    // The cleaner compacts below the active segment only: another partition's record (a mirror 'other'
    // deleted) rolls it, as the shard's later writes do.
    const leader = env.destination.leaderOf(MIRROR_STATE_TOPIC, 0);
    const epoch = env.dest.controller.image.partition(MIRROR_STATE_TOPIC, 0)!.leaderEpoch;
    const appended = new EmbeddedStateLog(env.dest, leader, 0).append(
      tombstones({ mirror: "other", topic: TOPIC, topicId: key.topicId, partition: 0 }).slice(0, 1),
      epoch,
    );
    await env.settle(100);
    await appended;
  }
  // Cleaner passes (every 30 s) on every replica.
  await env.settle(65_000);
  return { env, key };
}

describe("__mirror_state after the log cleaner ran", () => {
  it("the cleaner kept the LastMirrorEpochs tombstone and dropped the PREPARING record it followed", async () => {
    const { env } = await failedAfterTruncation(true);
    const leader = env.destination.leaderOf(MIRROR_STATE_TOPIC, 0);
    const records = new EmbeddedStateLog(env.dest, leader, 0).readAll();
    // One record per key: the LME tombstone, then the FAILED state record (then the other mirror's tombstone).
    expect(records.map((r) => r.value === null)).toEqual([true, false, true]);
  });

  for (const compact of [false, true]) {
    it(`a coordinator that loads it fails the partition over as the live one would: the LME is the log's epoch (${compact ? "compacted" : "full history"})`, async () => {
      const { env, key } = await failedAfterTruncation(compact);
      env.crash(env.coordinatorBroker(key));
      await env.settle(1000);
      expect(env.stateOf(key)).toMatchObject({ state: "FAILED", previousState: "PREPARING" });
      void env.router.command(key, { type: "STOP" });
      await env.settle(5000);
      // The log is the source's copy up to epoch 5: a failback from here cuts there, not at the log start.
      expect(env.stateOf(key)).toMatchObject({ state: "STOPPED", lastMirrorEpoch: 5 });
    });
  }
});
