import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { CommittedTxn } from "../model";
import { transactionOutcome } from "./transactions";
import type { Violation } from "./violation";

/**
 * How long a committed transaction may read as open on a partition leader that has led since before its
 * commit returned, or since it was elected: the coordinator writes a marker lost with its leader again
 * 100 ms after the write failed (`MARKER_RETRY_BACKOFF_MS`); a bound of 2 s leaves room for a slow disk
 * and still lies well inside the housekeeping pass (10 s) that would otherwise hide a lost marker.
 */
export const MARKER_BOUND_MS = 2_000;

/**
 * A committed transaction does not stay open on its partition's leader: once `commit()` returned, the
 * COMMIT marker is on the leader's log within {@link MARKER_BOUND_MS} of the latest of the commit, the
 * leader's election, the moment the leader's disk last had space again and the moment the partition's
 * ISR last grew back to min.insync.replicas. The marker is appended as Kafka's WriteTxnMarkers does
 * (acks=all): refused while the ISR is under min.insync.replicas, so nothing is checked then. A full disk
 * fails every append on the leader, the marker's too, and the embedded broker keeps leading on it (a
 * difference from Kafka the README states: Kafka takes the log directory offline and moves the
 * leadership), so the coordinator retries the marker until the disk has space; while the leader's disk is
 * full nothing is checked.
 * Meanwhile the partition's last stable offset stays behind the transaction, consumers reading committed
 * see nothing after it, and a mirror failing over in that window would end the transaction with ABORT on
 * its destination. The watch remembers, per partition, the leader epoch it saw and since when; a leader it
 * has not seen before counts from the check that first sees it, so checking less often only makes the
 * bound looser. Partitions whose log lost data (unclean elections) are skipped by the caller: there the
 * housekeeping pass restores markers.
 */
export class TxnMarkerWatch {
  private readonly leaders = new Map<string, { epoch: number; since: number }>();
  /** Per broker: when its disk last went from full to having space again. */
  private readonly diskFreedAt = new Map<number, number>();
  /** Partitions (`topic-partition`) whose ISR is under min.insync.replicas. */
  private readonly underMinIsr = new Set<string>();
  /** Per partition: when its ISR last grew back to min.insync.replicas. */
  private readonly minIsrMetAt = new Map<string, number>();

  constructor(
    private readonly node: string,
    private readonly cluster: KafkaCluster,
    now: () => number,
    private readonly minInsyncReplicas = 1,
  ) {
    // The moment an ISR grows back to min.insync.replicas is when a refused marker can be appended again;
    // a check that runs later cannot see it. The replay of the metadata log at construction only loosens it.
    cluster.controller.subscribe(({ record }) => {
      if (record.type !== "Partition" && record.type !== "PartitionChange") return;
      const topic = cluster.controller.image.topicsById.get(record.topicId);
      const replicas = topic?.partitions[record.partition]?.replicas.length;
      if (!topic || replicas === undefined) return;
      const key = `${topic.name}-${record.partition}`;
      if (record.isr.length < Math.min(this.minInsyncReplicas, replicas)) this.underMinIsr.add(key);
      else if (this.underMinIsr.delete(key)) this.minIsrMetAt.set(key, now());
    });
    // Every fault that fills or frees a disk goes through `setDiskFull`: the moment a leader's disk is freed
    // is when its marker can be written again, which a check that runs later cannot see.
    const setDiskFull = cluster.setDiskFull.bind(cluster);
    cluster.setDiskFull = (brokerId, full) => {
      const wasFull = cluster.isDiskFull(brokerId);
      setDiskFull(brokerId, full);
      if (wasFull && !cluster.isDiskFull(brokerId)) this.diskFreedAt.set(brokerId, now());
    };
  }

  check(commits: readonly CommittedTxn[], now: number): Violation[] {
    const out: Violation[] = [];
    for (const c of commits) {
      if (c.node !== this.node) continue;
      const meta = this.cluster.controller.image.partition(c.topic, c.partition);
      if (!meta || meta.leader < 0) continue;
      const key = `${c.topic}-${c.partition}`;
      let seen = this.leaders.get(key);
      if (!seen || seen.epoch !== meta.leaderEpoch) {
        seen = { epoch: meta.leaderEpoch, since: now };
        this.leaders.set(key, seen);
      }
      if (this.cluster.isDiskFull(meta.leader)) continue;
      if (meta.isr.length < Math.min(this.minInsyncReplicas, meta.replicas.length)) continue;
      const openFor =
        now -
        Math.max(
          c.decidedAt,
          seen.since,
          this.diskFreedAt.get(meta.leader) ?? seen.since,
          this.minIsrMetAt.get(key) ?? seen.since,
        );
      if (openFor < MARKER_BOUND_MS) continue;
      if (transactionOutcome(this.cluster, c.topic, c.partition, c.producerId, c.offset) !== "OPEN") continue;
      // Once per transaction and leader: the message names neither the time nor how long it was open.
      out.push({
        invariant: "txn-marker-timely",
        message: `${this.node} ${key}: the transaction of producer ${c.producerId} (data at offset ${c.offset}) still reads as open on leader ${meta.leader} (epoch ${meta.leaderEpoch}) ${MARKER_BOUND_MS} ms after its commit returned, the leader was elected and its disk had space: its COMMIT marker is not on the leader's log`,
      });
    }
    return out;
  }
}
