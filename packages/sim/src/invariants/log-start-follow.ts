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
  /** The leader's log start and high watermark before the call, and its log start after it. */
  logStartBefore: bigint;
  highWatermark: bigint;
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
 * - within what the copy holds: at most its high watermark (Kafka's `maybeIncrementLogStartOffset`);
 * - at most the source's own log start: the highest any replica of the source partition had while the
 *   simulation watched (a source leader change may bring a replica that has yet to follow its old leader).
 * Otherwise the copy drops records its source still holds, which no durability check below the log start
 * would see. Checked the moment the log start moves, by the broker guard.
 */
export class LogStartWatch {
  /** `node/topic/partition` -> the highest log start seen on any replica there. */
  private readonly highest = new Map<string, bigint>();

  /** Notes a log start `node`'s partition had (DeleteRecords answered, a replica seen). */
  note(node: string, topic: string, partition: number, logStart: bigint): void {
    const key = `${node}/${topic}/${partition}`;
    const seen = this.highest.get(key);
    if (seen === undefined || logStart > seen) this.highest.set(key, logStart);
  }

  /** The highest log start `source`'s partition had, noting what its running replicas hold now. */
  sourceLogStart(source: MirrorSource, topic: string, partition: number): bigint | undefined {
    for (const id of source.cluster.runningBrokers()) {
      const log = source.cluster.broker(id)?.replica(topic, partition)?.log;
      if (log) this.note(source.node, topic, partition, log.logStartOffset);
    }
    return this.highest.get(`${source.node}/${topic}/${partition}`);
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
    if (move.logStartAfter > move.highWatermark) {
      out.push({
        invariant: "log-start-follow",
        message: `${where} ${moved} past its high watermark ${move.highWatermark}`,
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
