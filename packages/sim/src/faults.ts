import type { KafkaCluster } from "@cluster-mirror/cluster";
import { MIRROR_STATE_TOPIC } from "@cluster-mirror/mirror";
import { encodeRecordBatch } from "@cluster-mirror/protocol";
import type { VirtualTime } from "./virtual-time";

/**
 * Fault injection on one cluster: broker crashes and restarts, leadership moves, unclean elections, and:
 * - slow disk (`setDiskLatency`): the log storage stays synchronous; a slow fsync is modelled by the
 *   broker acknowledging produces (acks 1/-1) only after the latency and, as a follower, delaying its next
 *   replica fetch after an append by it (so acks=-1 and the high watermark wait for the slow replica).
 *   Appends, consumer fetches, control batches and the mirror's append-as-is are not delayed.
 * - controller failover (`setControllerAvailable`): the cluster has one in-process controller (a KRaft
 *   quorum of one); a failover is a window with no active controller: its mutating requests fail with
 *   NOT_CONTROLLER (retriable), broker fencing/registration is queued and applied by the "new" controller
 *   when the window ends. No metadata is lost and no controller state is rebuilt.
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

/** Makes broker `brokerId`'s disk slow by `ms` per fsync (0: fast again); survives its restarts. */
export function setDiskLatency(cluster: KafkaCluster, brokerId: number, ms: number): void {
  cluster.setDiskLatency(brokerId, ms);
}

/** Starts (false) or ends (true) a controller failover window on `cluster` (see `Controller.setAvailable`). */
export function setControllerAvailable(cluster: KafkaCluster, available: boolean): void {
  cluster.controller.setAvailable(available);
}

/** Preferred leader election on every partition (moves `__mirror_state` leaders back after restarts). */
export function electPreferredLeaders(cluster: KafkaCluster): void {
  cluster.controller.electPreferredLeaders();
}

/**
 * An unclean leader election on the source (divergence): with `unclean.leader.election.enable=true` on
 * the topic, one follower is cut off and left behind by a write until it leaves the ISR (only that
 * partition's: a follower at an idle leader's log end stays in sync), `writeWhileCut` writes records it
 * will never get, then the other follower and the leader crash, so the cut-off replica becomes leader without them.
 * Everything is restarted and healed afterwards. Returns the new leader's log end offset at election (the
 * old leader's records at or above it are lost on the source), or why it could not force one (the
 * partition needs 3 running replicas and a leader; the cut-off replica must end up elected). Before the
 * write the leader epoch is bumped (the leader re-elected), so the lost records carry an epoch the new
 * leader never had: a mirror that copied them must find the divergence without that epoch (KIP-320).
 * `beforeCrash` runs right before the crashes (pending checks of what the election will lose).
 */
export async function uncleanLeaderElection(
  cluster: KafkaCluster,
  time: VirtualTime,
  topic: string,
  partition: number,
  writeWhileCut: () => Promise<void>,
  beforeCrash: () => void = () => {},
): Promise<UncleanElectionOutcome> {
  const meta = cluster.controller.image.partition(topic, partition);
  if (!meta) return { skipped: `${topic}-${partition} does not exist` };
  if (meta.replicas.length < 3) return { skipped: `only ${meta.replicas.length} replicas` };
  if (meta.leader < 0) return { skipped: "no leader" };
  if (!cluster.controller.isAvailable) return { skipped: "controller unavailable" };
  const running = new Set(cluster.runningBrokers());
  const down = meta.replicas.filter((r) => !running.has(r));
  if (down.length > 0) return { skipped: `replica(s) ${down.join(",")} down` };
  const leader = meta.leader;
  const [f1, f2] = meta.replicas.filter((r) => r !== leader) as [number, number];
  cluster.controller.incrementalAlterConfigs({ type: "topic", name: topic }, [
    { name: "unclean.leader.election.enable", op: "SET", value: "true" },
  ]);
  cluster.setReachable(f2, false);
  // A follower at the leader's log end stays in sync however long it is cut off (Kafka's rule, and the
  // controller still hears it): each partition of the topic that f2 follows takes a write f2 never gets
  // (acks=1, tried every 500 ms while refused, e.g. read-only until a failover ends), so f2 falls behind and
  // leaves its ISR after replica.lag.time.max.ms. These writes are lost with the election, as later ones are.
  const followed = (cluster.controller.image.topic(topic)?.partitions ?? [])
    .filter((p) => p.replicas.includes(f2) && p.leader >= 0 && p.leader !== f2)
    .map((p) => p.partition);
  const written = new Set<number>();
  const writing = new Set<number>();
  const isrHasF2 = (p: number) => cluster.controller.image.partition(topic, p)?.isr.includes(f2) ?? false;
  const writeBehind = (p: number) => {
    const broker = cluster.broker(cluster.controller.image.partition(topic, p)?.leader ?? -1);
    if (broker === undefined || broker.brokerId === f2 || written.has(p) || writing.has(p)) return;
    writing.add(p);
    void (async () => {
      try {
        await broker.produce({ topic, partition: p, batch: probeBatch(time.now()), acks: 1 });
        written.add(p);
      } catch {
        // refused (read-only, no leader): tried again at the next step
      } finally {
        writing.delete(p);
      }
    })();
  };
  await time.until(
    () => {
      for (const p of followed) writeBehind(p);
      return written.has(partition) && [...written].every((p) => !isrHasF2(p));
    },
    `broker ${f2} leaving the ISR of ${topic}-${partition}`,
    120_000,
    500,
  );
  // The leader is re-elected while f2 is out (a new leader epoch, as after a controller failover): what it
  // writes now carries an epoch f2 never sees, and mirrors copy it before the election loses it.
  const epoch = cluster.controller.image.partition(topic, partition)?.leaderEpoch ?? 0;
  cluster.controller.bumpLeaderEpochs([{ topic, partition, minLeaderEpoch: epoch + 1 }]);
  await time.advance(200);
  await writeWhileCut();
  await time.advance(500);
  // The setting is the topic's: every partition of it whose ISR f2 left is elected uncleanly too.
  const partitions = cluster.controller.image.topic(topic)?.partitions ?? [];
  const isrBefore = partitions.map((p) => [...p.isr]);
  beforeCrash();
  cluster.crashBroker(f1);
  cluster.crashBroker(leader);
  const after = cluster.controller.image.partition(topic, partition);
  const unclean: { partition: number; newLeaderEnd: bigint }[] = [];
  for (const p of cluster.controller.image.topic(topic)?.partitions ?? []) {
    const end = cluster.localBroker(p.leader)?.replica(topic, p.partition)?.log.logEndOffset;
    if (p.leader >= 0 && !isrBefore[p.partition]?.includes(p.leader) && end !== undefined) {
      unclean.push({ partition: p.partition, newLeaderEnd: end });
    }
  }
  cluster.setReachable(f2, true);
  const newLeaderEnd = cluster.broker(f2)?.replica(topic, partition)?.log.logEndOffset;
  cluster.startBroker(f1);
  cluster.startBroker(leader);
  await time.advance(1_000);
  if (after?.leader !== f2 || newLeaderEnd === undefined) {
    return { skipped: `broker ${f2} was not elected (leader ${after?.leader ?? "-"})` };
  }
  return { newLeaderEnd, unclean };
}

/**
 * What `uncleanLeaderElection` did: the new leader's log end at election, and every partition of the topic
 * elected uncleanly with its new leader's log end (the target among them); or why it did nothing.
 */
export type UncleanElectionOutcome =
  | { newLeaderEnd: bigint; unclean: { partition: number; newLeaderEnd: bigint }[] }
  | { skipped: string };

/** One plain record, written by `uncleanLeaderElection` so the cut-off follower falls behind. */
function probeBatch(nowMs: number): Buffer {
  return encodeRecordBatch({
    baseTimestamp: BigInt(nowMs),
    records: [
      {
        attributes: 0,
        offsetDelta: 0,
        timestampDelta: 0n,
        key: null,
        value: Buffer.from("unclean-election probe"),
        headers: [],
      },
    ],
  });
}
