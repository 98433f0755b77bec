import type { KafkaCluster } from "@cluster-mirror/cluster";
import { MIRROR_STATE_TOPIC } from "@cluster-mirror/mirror";
import type { VirtualTime } from "./virtual-time";

/**
 * Fault injection on one cluster. Not modelled, by design:
 * - controller failover: the embedded cluster has one in-process controller (no KRaft quorum), so there is
 *   nothing to fail over to; controller faults are out of scope.
 * - slow disk: the log storage is synchronous in process and has no latency hook (a `LogStorage` with
 *   delays would need the log to await its writes); not simulated.
 */

/** Brokers of `cluster` that are down (crashed or stopped). */
export function downBrokers(cluster: KafkaCluster, brokers: number): number[] {
  const running = new Set(cluster.runningBrokers());
  return Array.from({ length: brokers }, (_, i) => i).filter((id) => !running.has(id));
}

/** Crashes broker `brokerId` (its disk keeps what was appended). */
export function crashBroker(cluster: KafkaCluster, brokerId: number): void {
  cluster.crashBroker(brokerId);
}

/** Restarts every down broker of `cluster`. */
export function restartAll(cluster: KafkaCluster, brokers: number): number[] {
  const down = downBrokers(cluster, brokers);
  for (const id of down) cluster.startBroker(id);
  return down;
}

/**
 * Moves the leadership of `__mirror_state` partition `statePartition`: crashes its leader (the coordinator
 * on it dies, another broker's coordinator loads the partition). Returns the crashed broker, or undefined
 * when the partition has no running leader.
 */
export function crashMirrorStateLeader(cluster: KafkaCluster, statePartition: number): number | undefined {
  const meta = cluster.controller.image.partition(MIRROR_STATE_TOPIC, statePartition);
  if (!meta || meta.leader < 0 || !cluster.broker(meta.leader)) return undefined;
  cluster.crashBroker(meta.leader);
  return meta.leader;
}

/** Preferred leader election on every partition (moves `__mirror_state` leaders back after restarts). */
export function electPreferredLeaders(cluster: KafkaCluster): void {
  cluster.controller.electPreferredLeaders();
}

/**
 * An unclean leader election on the source (divergence): with `unclean.leader.election.enable=true` on
 * the topic, one follower is cut off until it leaves the ISR, `writeWhileCut` writes records it will never
 * get, then the other follower and the leader crash, so the cut-off replica becomes leader without them.
 * Everything is restarted and healed afterwards. Returns the new leader's log end offset at election (the
 * old leader's records at or above it are lost on the source), or undefined when the partition is not in
 * a shape to do it (needs 3 running replicas).
 */
export async function uncleanLeaderElection(
  cluster: KafkaCluster,
  time: VirtualTime,
  topic: string,
  partition: number,
  writeWhileCut: () => Promise<void>,
): Promise<bigint | undefined> {
  const meta = cluster.controller.image.partition(topic, partition);
  if (!meta || meta.replicas.length < 3 || meta.leader < 0) return undefined;
  const running = new Set(cluster.runningBrokers());
  if (!meta.replicas.every((r) => running.has(r))) return undefined;
  const leader = meta.leader;
  const [f1, f2] = meta.replicas.filter((r) => r !== leader) as [number, number];
  cluster.controller.incrementalAlterConfigs({ type: "topic", name: topic }, [
    { name: "unclean.leader.election.enable", op: "SET", value: "true" },
  ]);
  cluster.setReachable(f2, false);
  await time.until(
    () => !(cluster.controller.image.partition(topic, partition)?.isr.includes(f2) ?? false),
    `broker ${f2} leaving the ISR of ${topic}-${partition}`,
    120_000,
    500,
  );
  await writeWhileCut();
  cluster.crashBroker(f1);
  cluster.crashBroker(leader);
  const after = cluster.controller.image.partition(topic, partition);
  cluster.setReachable(f2, true);
  const newLeaderEnd = cluster.broker(f2)?.replica(topic, partition)?.log.logEndOffset;
  cluster.startBroker(f1);
  cluster.startBroker(leader);
  await time.advance(1_000);
  return after?.leader === f2 ? newLeaderEnd : undefined;
}
