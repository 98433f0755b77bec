import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { Violation } from "./violation";

/** A destination leader's log start raised to follow its source's (`Broker.followSourceLogStart`). */
export interface LogStartMove {
  node: string;
  brokerId: number;
  topic: string;
  partition: number;
  /** The source log start the mirror asked to follow. */
  requested: bigint;
  /** The leader's log start before the call, and after it. */
  logStartBefore: bigint;
  logStartAfter: bigint;
}

/** The source a destination partition is mirrored from, as its `mirror.name` names the edge. */
export interface MirrorSource {
  node: string;
  cluster: KafkaCluster;
}

/**
 * Records may leave a mirror's copy only as they left its source: a log start the copy raises to follow
 * its source (DeleteRecords, retention there) must be
 * - a mirror's still: never on a partition that may accept writes (after STOPPED its log is the
 *   application's, and only its own DeleteRecords or retention may purge it);
 * - at most the source's own log start: the highest any replica of the source partition had while the
 *   simulation watched (a source leader change may bring a replica that has yet to follow its old leader).
 * Otherwise the copy drops records its source still holds, which no durability check below the log start
 * would see. Checked the moment the log start moves, by the broker guard.
 */
export class LogStartWatch {
  /**
   * `node/topicId/partition` -> the highest log start seen there since the partition last started over
   * (a full truncation restarts its log, maybe lower).
   */
  private readonly highest = new Map<string, bigint>();

  /** Notes a log start `node`'s partition had (DeleteRecords answered, a log start followed, a replica seen). */
  note(cluster: KafkaCluster, node: string, topic: string, partition: number, logStart: bigint): void {
    const key = keyOf(cluster, node, topic, partition);
    if (key === undefined) return;
    const seen = this.highest.get(key);
    if (seen === undefined || logStart > seen) this.highest.set(key, logStart);
  }

  /** `node`'s partition starts over at `logStart` (a full truncation): what was seen before is forgotten. */
  restart(cluster: KafkaCluster, node: string, topic: string, partition: number, logStart: bigint): void {
    const key = keyOf(cluster, node, topic, partition);
    if (key !== undefined) this.highest.set(key, logStart);
  }

  /** The highest log start `source`'s partition had, noting what its running replicas hold now. */
  sourceLogStart(source: MirrorSource, topic: string, partition: number): bigint | undefined {
    for (const id of source.cluster.runningBrokers()) {
      const log = source.cluster.broker(id)?.replica(topic, partition)?.log;
      if (log) this.note(source.cluster, source.node, topic, partition, log.logStartOffset);
    }
    const key = keyOf(source.cluster, source.node, topic, partition);
    return key === undefined ? undefined : this.highest.get(key);
  }

  /** Checks one move (see the class comment); `readOnly` says why the partition is still a mirror. */
  check(move: LogStartMove, readOnly: string | undefined, source: MirrorSource | undefined): Violation[] {
    if (move.logStartAfter <= move.logStartBefore) return [];
    const where = `${move.node} broker ${move.brokerId} ${move.topic}-${move.partition}`;
    const moved = `raised its log start ${move.logStartBefore} -> ${move.logStartAfter} to follow its source (asked ${move.requested})`;
    const out: Violation[] = [];
    if (readOnly === undefined) {
      out.push({
        invariant: "log-start-follow",
        message: `${where} ${moved}, but the partition is writable (every mirror state of it is STOPPED): a failed-over log lost records to its old source's purge`,
      });
    }
    const sourceStart = source ? this.sourceLogStart(source, move.topic, move.partition) : undefined;
    if (source && sourceStart !== undefined && move.logStartAfter > sourceStart) {
      out.push({
        invariant: "log-start-follow",
        message: `${where} ${moved} past the source ${source.node}'s log start ${sourceStart}: records the source still holds were dropped from the copy`,
      });
    }
    return out;
  }
}

/** `node/topicId/partition` of the topic `cluster` has under that name now (undefined: none). */
function keyOf(cluster: KafkaCluster, node: string, topic: string, partition: number): string | undefined {
  const id = cluster.controller.image.topic(topic)?.topicId;
  return id === undefined ? undefined : `${node}/${id}/${partition}`;
}
