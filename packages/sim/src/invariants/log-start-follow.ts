import type { KafkaCluster } from "@cluster-mirror/cluster";
import { leaderLog } from "./logs";
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
  /**
   * The leader's batches before the call, from its log start up to `requested` (what the move may drop);
   * undefined when the log could not be read.
   */
  batchesBefore: readonly HeldBatch[] | undefined;
}

/** A batch as a log held it: its offsets and a copy of its bytes. */
export interface HeldBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  bytes: Buffer;
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
 *   simulation watched (a source leader change may bring a replica that has yet to follow its old leader),
 *   since the source's log last started over (a full truncation: a failback onto a copy that never had its
 *   epochs restarts it at that copy's log start, maybe lower). Past it only while the records it drops are
 *   still those of an earlier log of the source: at most the highest log start the source had before it
 *   started over, and none of the dropped records at or above the source's log start now is in a batch
 *   the source's leader holds now, byte for byte. A fetch answer the source gave just before it started
 *   over arrives after it (the link's latency): the copy appends its batches and follows its log start as
 *   for any answer it accepts (so does Kafka's follower), and they are records the source no longer holds
 *   at all. The copy then cuts them as the source's log rewrite asks.
 * Otherwise the copy drops records its source still holds, which no durability check below the log start
 * would see. Checked the moment the log start moves, by the broker guard.
 */
export class LogStartWatch {
  /**
   * `node/topicId/partition` -> the highest log start seen there since the partition last started over
   * (a full truncation restarts its log, maybe lower).
   */
  private readonly highest = new Map<string, bigint>();
  /** `node/topicId/partition` -> the highest log start seen there before the partition last started over. */
  private readonly earlier = new Map<string, bigint>();
  /** Moves past the source's log start allowed as following an earlier log of it (for coverage). */
  earlierLogFollows = 0;

  /** Notes a log start `node`'s partition had (DeleteRecords answered, a log start followed, a replica seen). */
  note(cluster: KafkaCluster, node: string, topic: string, partition: number, logStart: bigint): void {
    const key = keyOf(cluster, node, topic, partition);
    if (key === undefined) return;
    const seen = this.highest.get(key);
    if (seen === undefined || logStart > seen) this.highest.set(key, logStart);
  }

  /**
   * `node`'s partition starts over at `logStart` (a full truncation): what was seen before bounds only copies
   * that still drop records of an earlier log (see `droppedOnlyEarlierRecords`).
   */
  restart(cluster: KafkaCluster, node: string, topic: string, partition: number, logStart: bigint): void {
    const key = keyOf(cluster, node, topic, partition);
    if (key === undefined) return;
    const seen = this.highest.get(key);
    const before = this.earlier.get(key);
    if (seen !== undefined && (before === undefined || seen > before)) this.earlier.set(key, seen);
    this.highest.set(key, logStart);
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
      if (this.droppedOnlyEarlierRecords(move, source, sourceStart)) {
        this.earlierLogFollows++;
        return out;
      }
      out.push({
        invariant: "log-start-follow",
        message: `${where} ${moved} past the source ${source.node}'s log start ${sourceStart}: records the source still holds were dropped from the copy`,
      });
    }
    return out;
  }

  /**
   * True when the source's log started over since it had a log start of at least `move.logStartAfter`, and
   * no record the move dropped at or above the source's log start now (`sourceStart`) is in a batch the
   * source's leader holds now, byte for byte: the copy followed its source's earlier log, whose records the
   * source no longer holds.
   */
  private droppedOnlyEarlierRecords(move: LogStartMove, source: MirrorSource, sourceStart: bigint): boolean {
    const key = keyOf(source.cluster, source.node, move.topic, move.partition);
    const earlier = key === undefined ? undefined : this.earlier.get(key);
    if (earlier === undefined || move.logStartAfter > earlier || !move.batchesBefore) return false;
    const from = move.logStartBefore > sourceStart ? move.logStartBefore : sourceStart;
    const dropped = move.batchesBefore.filter(
      (b) => b.lastOffset >= from && b.baseOffset < move.logStartAfter,
    );
    if (dropped.length === 0) return true;
    // The leader's log is the source's: a follower that has yet to follow its restart still holds the
    // earlier log's batches, and drops them on its next fetch.
    const log = leaderLog(source.cluster, move.topic, move.partition);
    if (!log) return false;
    try {
      for (const b of log.batches()) {
        if (b.baseOffset >= move.logStartAfter) break;
        if (b.lastOffset < from) continue;
        if (dropped.some((d) => d.baseOffset === b.baseOffset && d.bytes.equals(b.buffer))) return false;
      }
    } catch {
      return false; // a leader log that cannot be read may hold them
    }
    return true;
  }
}

/** `node/topicId/partition` of the topic `cluster` has under that name now (undefined: none). */
function keyOf(cluster: KafkaCluster, node: string, topic: string, partition: number): string | undefined {
  const id = cluster.controller.image.topic(topic)?.topicId;
  return id === undefined ? undefined : `${node}/${id}/${partition}`;
}
