import type { KafkaCluster } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import type { ClusterMirroring } from "../src/cluster-mirroring";
import { MIRROR_STATE_TOPIC } from "../src/destination/embedded-state-log";
import { advance, embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

type Env = ReturnType<typeof embeddedApiEnv>;

/**
 * Mirror `m1` of a one-partition `orders` (2 records, caught up) on three destination brokers, the copy on
 * all three (RF 3), and every committed change of its partition, as `FROM->TO`.
 */
async function ordersOnThreeBrokers(): Promise<{ env: Env; changes: string[] }> {
  const env = embeddedApiEnv({ destinationBrokers: 3, numStatePartitions: 1 });
  const { mirroring, destination, source } = env;
  const changes: string[] = [];
  mirroring.subscribeTransitions((t) => changes.push(`${t.previous.state}->${t.record.state}`));
  source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
  await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
  destination.controller.createTopic({
    name: "orders",
    replicaAssignment: [[0, 1, 2]],
    configs: {},
    topicId: source.controller.image.topic("orders")!.topicId,
  });
  await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
  await produce(env, source, "orders", 2);
  await runUntil(env, mirroring.whenCaughtUp("m1"));
  return { env, changes };
}

/** `offset@epoch` of every batch of `orders-0` on the cluster's leader: compares two logs. */
function batches(cluster: KafkaCluster): string {
  const log = cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
  return [...log.batches()].map((b) => `${b.baseOffset}@${b.partitionLeaderEpoch}`).join(",");
}

/**
 * Runs `ms` of virtual time 1 ms at a time and checks the spec §4 invariant after each step: no batch on
 * the destination leader carries an epoch above the leader's epoch. `atStep` runs before step `i`.
 */
async function advanceCheckingEpochs(
  env: Env,
  ms: number,
  atStep: (i: number) => void = () => {},
): Promise<void> {
  for (let i = 0; i < ms; i++) {
    atStep(i);
    await advance(env, 1);
    const p = env.destination.controller.image.partition("orders", 0)!;
    const log = p.leader >= 0 ? env.destination.broker(p.leader)?.replica("orders", 0)?.log : undefined;
    for (const b of log?.batches() ?? []) expect(b.partitionLeaderEpoch).toBeLessThanOrEqual(p.leaderEpoch);
  }
}

/** Makes the partition's next fence bump run `around` (its result is the controller's). */
function onNextBump(mirroring: ClusterMirroring, around: (bump: () => void) => void): void {
  const destination = mirroring.destination;
  const bumpBatch = destination.bumpLeaderEpochsBatch.bind(destination);
  let armed = true;
  destination.bumpLeaderEpochsBatch = (requests) => {
    if (!armed) return bumpBatch(requests);
    armed = false;
    let results: ReturnType<typeof bumpBatch> = [];
    around(() => {
      results = bumpBatch(requests);
    });
    return results;
  };
}

describe("EPOCH_FENCING (spec §4): no batch above the local leader epoch, whatever happens around the bump", () => {
  it("two higher epochs in one fetch: each is fenced in turn, once, and the copy ends offset-identical", async () => {
    const { env, changes } = await ordersOnThreeBrokers();
    const { mirroring, source, destination } = env;
    // While paused, the source moves to epoch 20 and then 45, a batch in each: the resumed fetch gets both.
    await runUntil(env, mirroring.admin.pauseTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "PAUSED"));
    for (const epoch of [20, 45]) {
      source.controller.bumpLeaderEpochs([{ topic: "orders", partition: 0, minLeaderEpoch: epoch }]);
      await produce(env, source, "orders", 1);
    }
    changes.length = 0;
    await runUntil(env, mirroring.admin.resumeTopics("m1", "orders"));
    await advanceCheckingEpochs(env, 3000);

    // Epoch 20 is fenced (bump to 30), then 45 (bump to 55): two bumps, not one per batch.
    expect(changes).toEqual([
      "PAUSED->MIRRORING",
      "MIRRORING->EPOCH_FENCING",
      "EPOCH_FENCING->MIRRORING",
      "MIRRORING->EPOCH_FENCING",
      "EPOCH_FENCING->MIRRORING",
    ]);
    expect(destination.controller.image.partition("orders", 0)!.leaderEpoch).toBe(55);
    expect(batches(destination)).toBe(batches(source));
    expect(batches(source)).toBe("0@0,2@20,3@45");
  });

  for (const when of ["before", "after"] as const) {
    it(`the destination leader dies just ${when} the fence bump lands: the new leader mirrors on without an epoch above its own`, async () => {
      const { env, changes } = await ordersOnThreeBrokers();
      const { mirroring, source, destination } = env;
      const crashed: number[] = [];
      const crashLeader = () => {
        const leader = destination.controller.image.partition("orders", 0)!.leader;
        destination.crashBroker(leader);
        crashed.push(leader);
      };
      onNextBump(mirroring, (bump) => {
        if (when === "before") crashLeader();
        bump();
        if (when === "after") crashLeader();
      });
      source.controller.bumpLeaderEpochs([{ topic: "orders", partition: 0, minLeaderEpoch: 40 }]);
      await produce(env, source, "orders", 3);
      // The old leader comes back (as a follower) after a while.
      await advanceCheckingEpochs(env, 3000, (i) => {
        if (i === 1000) for (const b of crashed.splice(0)) destination.startBroker(b);
      });
      expect(changes.slice(-2)).toEqual(["MIRRORING->EPOCH_FENCING", "EPOCH_FENCING->MIRRORING"]);
      expect(destination.controller.image.partition("orders", 0)!.leaderEpoch).toBeGreaterThanOrEqual(50);
      await produce(env, source, "orders", 1);
      await runUntil(env, mirroring.whenCaughtUp("m1"), 30_000);
      expect(batches(destination)).toBe(batches(source));
      expect(mirroring.coordinators.describe("m1").map((v) => v.state)).toEqual(["MIRRORING"]);
    });
  }

  it("the coordinator dies after the fence bump landed, before MIRRORING was recorded: the next one bumps again and mirrors on", async () => {
    const { env, changes } = await ordersOnThreeBrokers();
    const { mirroring, source, destination } = env;
    const coordinator = destination.controller.image.partition(MIRROR_STATE_TOPIC, 0)!.leader;
    onNextBump(mirroring, (bump) => {
      bump();
      destination.crashBroker(coordinator);
    });
    source.controller.bumpLeaderEpochs([{ topic: "orders", partition: 0, minLeaderEpoch: 40 }]);
    await produce(env, source, "orders", 3);
    await advanceCheckingEpochs(env, 3000);
    // The recorded state stayed EPOCH_FENCING: the next coordinator's partition bumps from there (above
    // the landed bump, 10 more) and records MIRRORING.
    expect(changes.slice(-2)).toEqual(["MIRRORING->EPOCH_FENCING", "EPOCH_FENCING->MIRRORING"]);
    expect(destination.controller.image.partition(MIRROR_STATE_TOPIC, 0)!.leader).not.toBe(coordinator);
    expect(destination.controller.image.partition("orders", 0)!.leaderEpoch).toBeGreaterThanOrEqual(60);
    destination.startBroker(coordinator);
    await produce(env, source, "orders", 1);
    await runUntil(env, mirroring.whenCaughtUp("m1"), 30_000);
    expect(batches(destination)).toBe(batches(source));
  });
});
