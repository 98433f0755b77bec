import type { MetadataLogEntry } from "@cluster-mirror/cluster";
import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { encodeRecordBatch } from "@cluster-mirror/protocol";
import { crashBroker, downBrokers } from "./faults";
import { OneShotWatch } from "./one-shot-watch";
import type { Simulation } from "./simulation";

/** How long (virtual ms) the watch stays armed without a re-add: it belongs to the commands around it. */
const ARMED_MS = 60_000;
/** How long after the crash, and how often, produces try the re-added topic. */
const PROBE_FOR_MS = 6_000;
const PROBE_EVERY_MS = 20;

/** A `mirror.name` value that asks for mirroring (not `.removed`). */
function mirroring(value: string | null | undefined): value is string {
  return typeof value === "string" && value !== "" && !value.endsWith(".removed");
}

/**
 * Aims a crash between a re-add's `mirror.name` (the topic is read-only again from that metadata batch) and
 * its START: the next time a topic that was `.removed` on any cluster is asked to mirror again, crashes the
 * broker leading the `__mirror_state` partition of its partition 0 `delayMs` later (0: right after the
 * metadata batch, before the re-add sends its START) and restarts it `downMs` after that. Another coordinator then loads the partition still STOPPED. For `PROBE_FOR_MS` after the
 * crash, while the topic's `mirror.name` still asks for mirroring, a produce (acks=1) goes to each of its
 * partitions' leaders every `PROBE_EVERY_MS`: the broker guards report any that lands (`read-only`). A
 * busy cluster (a broker already down) skips the crash; the watch disarms after `ARMED_MS` without a match.
 */
export function crashOnReAdd(sim: Simulation, delayMs: number, downMs: number): void {
  const watch = new OneShotWatch(sim, ARMED_MS);
  for (const node of sim.world.spec.clusters) {
    const { cluster } = sim.node(node);
    // Whether each topic's mirror.name asked for a removal before the record being published.
    const removed = new Map<string, boolean>();
    for (const t of cluster.controller.image.topicsById.values()) {
      removed.set(t.name, t.configs.get("mirror.name")?.endsWith(".removed") ?? false);
    }
    const listener = ({ record }: MetadataLogEntry) => {
      if (record.type !== "Config" || record.resourceType !== "topic" || !watch.armed) return;
      if (record.name !== "mirror.name") return;
      const topic = record.resourceName;
      const wasRemoved = removed.get(topic) ?? false;
      removed.set(topic, record.value?.endsWith(".removed") ?? false);
      if (!wasRemoved || !mirroring(record.value)) return;
      const mirrorName = record.value;
      watch.disarm();
      const crash = () => crashCoordinatorOf(sim, node, topic, mirrorName, downMs);
      // 0: before the re-add's next step (its START is sent after an await); not from inside the publish.
      if (delayMs === 0) queueMicrotask(crash);
      else sim.world.scheduler.schedule(crash, delayMs);
    };
    watch.add(cluster.controller.subscribe(listener, cluster.controller.metadataLog().length));
  }
  sim.step(
    `crash the re-added topic's coordinator (the next re-add) ${delayMs} ms after its mirror.name, for ${downMs} ms`,
  );
}

function crashCoordinatorOf(
  sim: Simulation,
  node: string,
  topic: string,
  mirrorName: string,
  downMs: number,
): void {
  const { cluster } = sim.node(node);
  const meta = cluster.controller.image.topic(topic);
  if (!meta || downBrokers(cluster, sim.brokers).length > 0) return;
  const statePartitions = cluster.controller.image.topic(MIRROR_STATE_TOPIC)?.partitions.length ?? 1;
  const key = { mirror: mirrorName.replace(/\.paused$/, ""), topic, topicId: meta.topicId, partition: 0 };
  const coordinator = cluster.controller.image.partition(
    MIRROR_STATE_TOPIC,
    mirrorStatePartitionFor(key, statePartitions),
  )?.leader;
  if (coordinator === undefined || coordinator < 0) return;
  crashBroker(cluster, coordinator);
  sim.step(`crash ${node} broker ${coordinator} (coordinator of ${key.mirror} ${topic}-0) during its re-add`);
  // The node's current process: a node restart meanwhile started every broker of a new one.
  sim.world.scheduler.schedule(() => sim.node(node).cluster.startBroker(coordinator), downMs);
  const end = sim.world.clock.now() + PROBE_FOR_MS;
  const probe = () => {
    const now = cluster.controller.image.topic(topic);
    if (now?.topicId !== meta.topicId || !mirroring(now.configs.get("mirror.name"))) return;
    for (const p of now.partitions) {
      const broker = p.leader >= 0 ? cluster.broker(p.leader) : undefined;
      if (!broker) continue;
      const batch = encodeRecordBatch({
        baseTimestamp: BigInt(sim.world.clock.now()),
        records: [
          {
            attributes: 0,
            offsetDelta: 0,
            timestampDelta: 0n,
            key: null,
            value: Buffer.from("re-add probe"),
            headers: [],
          },
        ],
      });
      // Refusals (read-only, no leader, a broker down) are expected; the guards judge what lands.
      try {
        broker.produce({ topic, partition: p.partition, batch, acks: 1 }).catch(() => {});
      } catch {
        // refused before its first await (a broker stopping)
      }
    }
    if (sim.world.clock.now() < end) sim.world.scheduler.schedule(probe, PROBE_EVERY_MS);
  };
  probe();
}
