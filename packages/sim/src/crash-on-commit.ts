import type { KafkaCluster } from "@cluster-mirror/cluster";
import { MIRROR_STATE_TOPIC, type MirrorPartitionKey, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { crashBroker, downBrokers } from "./faults";
import { OneShotWatch } from "./one-shot-watch";
import type { Simulation } from "./simulation";

/**
 * Where in a partition's life a `crashOnCommit` crash aims, as a test of its committed state and the state
 * before it: just after an epoch bump (EPOCH_FENCING, or MIRRORING back from it: a fetched batch's leader
 * epoch was above the local one, as after a failback or a source leader change), MIRRORING (from
 * PREPARING, a resume or an epoch bump), STOPPING, PREPARING.
 */
const TRIGGERS: readonly { name: string; at: (state: string, previous: string | null) => boolean }[] = [
  {
    name: "an epoch bump",
    at: (state, previous) =>
      state === "EPOCH_FENCING" || (state === "MIRRORING" && previous === "EPOCH_FENCING"),
  },
  { name: "MIRRORING", at: (state) => state === "MIRRORING" },
  { name: "STOPPING", at: (state) => state === "STOPPING" },
  { name: "PREPARING", at: (state) => state === "PREPARING" },
];

/** How long (virtual ms) a watch that has not fired stays armed: it belongs to the commands around it. */
const ARMED_MS = 60_000;

/**
 * The broker that runs both the coordinator of a mirror partition (it leads the partition's
 * `__mirror_state` partition) and its destination leader (it runs the partition's fetcher), or undefined
 * when two brokers hold those roles or either has no leader.
 */
export function coordinatorAndLeader(cluster: KafkaCluster, key: MirrorPartitionKey): number | undefined {
  const statePartitions = cluster.controller.image.topic(MIRROR_STATE_TOPIC)?.partitions.length ?? 1;
  const coordinator = cluster.controller.image.partition(
    MIRROR_STATE_TOPIC,
    mirrorStatePartitionFor(key, statePartitions),
  )?.leader;
  const leader = cluster.controller.image.partition(key.topic, key.partition)?.leader;
  return coordinator !== undefined && coordinator >= 0 && coordinator === leader ? leader : undefined;
}

/**
 * Crashes, `delayMs` from the moment it finds one, the broker that both coordinates and leads a mirror
 * partition at the point of its life `triggerChoice` picks (see `TRIGGERS`), and restarts it `downMs` later: the
 * partition's coordinator and its fetcher die together, so its recovery must rebuild both from the
 * committed record while its data leader moves. A partition already there (on any cluster, first found) is
 * taken at once; otherwise a one-shot watch on every cluster's committed transitions takes the first
 * partition to commit there, so the crash lands right after an epoch bump, a failback's MIRRORING
 * or a failover's STOPPING, where a timed `crashSoon` rarely hits. At most one broker is down per cluster
 * (a busy cluster skips the crash); the watch disarms after `ARMED_MS` without a match.
 */
export function crashOnCommit(sim: Simulation, triggerChoice: number, delayMs: number, downMs: number): void {
  const trigger = TRIGGERS[Math.abs(triggerChoice) % TRIGGERS.length]!;
  const crashLater = (node: string, key: MirrorPartitionKey): void => {
    sim.world.scheduler.schedule(() => {
      // The node's current process (a node restart may have replaced it meanwhile).
      const { cluster } = sim.node(node);
      if (downBrokers(cluster, sim.brokers).length > 0) return;
      // Leadership may have moved during the delay: crash only if one broker still holds both roles.
      const broker = coordinatorAndLeader(cluster, key);
      if (broker === undefined) return;
      crashBroker(cluster, broker);
      sim.step(
        `crash ${node} broker ${broker} (coordinator and leader of ${key.mirror} ${key.topic}-${key.partition})`,
      );
      sim.world.scheduler.schedule(() => sim.node(node).cluster.startBroker(broker), downMs);
    }, delayMs);
  };
  const label = `crash the broker coordinating and leading a partition at ${trigger.name}`;
  for (const node of sim.world.spec.clusters) {
    const { cluster, mirroring } = sim.node(node);
    const now = mirroring.coordinators
      .describe()
      .find(
        (v) => trigger.at(v.state, v.previousState) && coordinatorAndLeader(cluster, v.key) !== undefined,
      );
    if (now) {
      crashLater(node, { ...now.key });
      sim.step(
        `${label} (${node} ${now.key.mirror} ${now.key.topic}-${now.key.partition}) in ${delayMs} ms for ${downMs} ms`,
      );
      return;
    }
  }
  const watch = new OneShotWatch(sim, ARMED_MS);
  for (const node of sim.world.spec.clusters) {
    const { cluster, mirroring } = sim.node(node);
    watch.add(
      mirroring.subscribeTransitions((t) => {
        if (!watch.armed) return;
        if (
          !trigger.at(t.record.state, t.previous.state) ||
          coordinatorAndLeader(cluster, t.key) === undefined
        )
          return;
        watch.disarm();
        crashLater(node, { ...t.key });
      }),
    );
  }
  sim.step(`${label} (the next to commit it) ${delayMs} ms after, for ${downMs} ms`);
}
