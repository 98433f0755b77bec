import type { Broker, KafkaCluster } from "@cluster-mirror/cluster";
import type { HeldBatch, LogStartMove } from "./invariants/log-start-follow";
import type { Violation } from "./invariants/violation";

/** What the broker guards ask of the simulation (see `installBrokerGuards`). */
export interface GuardHooks {
  /** Why `node`'s partition must refuse produces now (undefined: it may accept them). */
  readOnlyReason(node: string, topic: string, partition: number): string | undefined;
  /**
   * A leader truncation of `node`'s partition is about to run (see `CommittedPrefix.onTruncate`). Returns
   * what to record once the cut is made: it may fail before cutting anything (the controller that records
   * it is failing over, a broker stopping), and the engine then retries it, or fails over without it.
   */
  beforeTruncate(
    node: string,
    topic: string,
    partition: number,
    offset: bigint,
    full: boolean,
  ): (() => void) | undefined;
  /**
   * A mirror is about to append fetched batches to `node`'s partition leader, at its log end (see
   * `CommittedPrefix.beforeMirrorAppend`).
   */
  beforeMirrorAppend(node: string, topic: string, partition: number): void;
  /** Called before any produce reaches a broker: lets pending checks run before the log changes. */
  beforeProduce(node: string, topic: string, partition: number): void;
  /**
   * A broker is about to append a control batch (a transaction marker, a failover's barrier) to its
   * partition as leader: as `beforeProduce`, lets pending checks run before the log changes. A transaction
   * coordinator writes its markers without any produce (an abort at the transaction's timeout).
   */
  beforeControlAppend(node: string, topic: string, partition: number): void;
  /** A broker appended a control batch (a transaction marker) to its partition as leader. */
  afterControlAppend(node: string, brokerId: number, topic: string, partition: number): void;
  /** A leader's log start was raised to follow its mirror's source (see `LogStartWatch.check`). */
  afterFollowLogStart(move: LogStartMove): void;
  /**
   * A leader's high watermark moved from `before` during a mirror's append or a follower's fetch (which
   * reports the follower's log end): what the move committed is checked at once against the in-sync replicas.
   */
  afterHighWatermarkMove(node: string, topic: string, partition: number, before: bigint): void;
  /**
   * A leader's log was emptied to start at an offset (`truncateFullyAndStartAt`: a mirror's copy reset to
   * its source's log start): its high watermark jumped there without an append.
   */
  afterTruncateFully(node: string, topic: string, partition: number): void;
  /** A leader's log start was raised by DeleteRecords (whoever sent it). */
  afterDeleteRecords(node: string, topic: string, partition: number, logStart: bigint): void;
  report(violations: readonly Violation[]): void;
}

const guarded = new WeakSet<Broker>();

/**
 * Wraps every broker of `cluster`, now and after every (re)start, so the simulation sees each produce and
 * each leader truncation as it happens, not only between commands:
 * - a produce the leader appends (its log end moves) while `readOnlyReason` says the partition must refuse
 *   it is a `read-only` violation, whoever sent it (workload, probe, a late retry);
 * - `truncateTo` / `truncateFullyAndStartAt` (the mirror aligning a destination) are reported to the
 *   committed-prefix tracker before they run, and so is each mirror append (a committed batch that vanished
 *   without a truncation is seen before the mirror copies it back);
 * - each control batch a leader appends (a transaction marker) is announced before it is appended (as a
 *   produce is) and once it is on the log, so a fault can land right after it (`txnCommitCrash`);
 * - each log start a leader raises, to follow its mirror's source or by DeleteRecords, is announced with
 *   what the log held before;
 * - each high watermark move of a mirror's append (`appendAsIs`) or of a follower's fetch is announced as it happens,
 *   so a batch committed for a follower that no longer holds it is seen before the follower fetches again.
 * Wrapping replaces the instance's methods and calls the originals: the engine is unchanged.
 */
export function installBrokerGuards(node: string, cluster: KafkaCluster, hooks: GuardHooks): void {
  const wrap = (broker: Broker | undefined) => {
    if (!broker || guarded.has(broker)) return;
    guarded.add(broker);
    const produce = broker.produce.bind(broker);
    broker.produce = (request) => {
      hooks.beforeProduce(node, request.topic, request.partition);
      const reason = readOnlyReasonSafe(hooks, node, request.topic, request.partition);
      const before = broker.replica(request.topic, request.partition)?.log.logEndOffset;
      // The append is synchronous inside produce (before its first await): the log end tells if it happened.
      const result = produce(request);
      const after = broker.replica(request.topic, request.partition)?.log.logEndOffset;
      if (reason !== undefined && before !== undefined && after !== undefined && after > before) {
        hooks.report([
          {
            invariant: "read-only",
            message: `${node} broker ${broker.brokerId} appended a produce to ${request.topic}-${request.partition} at offset ${before} while ${reason}`,
          },
        ]);
      }
      return result;
    };
    const appendControlBatch = broker.appendControlBatch.bind(broker);
    broker.appendControlBatch = (topic, partition, batch, acks) => {
      hooks.beforeControlAppend(node, topic, partition);
      const info = appendControlBatch(topic, partition, batch, acks);
      hooks.afterControlAppend(node, broker.brokerId, topic, partition);
      return info;
    };
    const followSourceLogStart = broker.followSourceLogStart.bind(broker);
    broker.followSourceLogStart = (topic, partition, offset) => {
      const log = broker.replica(topic, partition)?.log;
      const logStartBefore = log?.logStartOffset ?? 0n;
      // Copied before the call: the move may delete them (and their segments).
      let batchesBefore: HeldBatch[] | undefined = [];
      if (log && offset > logStartBefore) {
        try {
          for (const b of log.batches()) {
            if (b.baseOffset >= offset) break;
            if (b.lastOffset < logStartBefore) continue;
            batchesBefore.push({
              baseOffset: b.baseOffset,
              lastOffset: b.lastOffset,
              bytes: Buffer.from(b.buffer),
            });
          }
        } catch {
          batchesBefore = undefined; // unreadable (a failing disk): the check then allows nothing extra
        }
      }
      const logStartAfter = followSourceLogStart(topic, partition, offset);
      hooks.afterFollowLogStart({
        node,
        brokerId: broker.brokerId,
        topic,
        partition,
        requested: offset,
        logStartBefore,
        logStartAfter,
        batchesBefore,
      });
      return logStartAfter;
    };
    const deleteRecords = broker.deleteRecords.bind(broker);
    broker.deleteRecords = (topic, partition, offset, context) => {
      const logStart = deleteRecords(topic, partition, offset, context);
      hooks.afterDeleteRecords(node, topic, partition, logStart);
      return logStart;
    };
    const appendAsIs = broker.appendAsIs.bind(broker);
    broker.appendAsIs = (topic, partition, batches, options) => {
      hooks.beforeMirrorAppend(node, topic, partition);
      return withHighWatermarkWatch(broker, topic, partition, hooks, node, () =>
        appendAsIs(topic, partition, batches, options),
      );
    };
    const handleReplicaFetch = broker.handleReplicaFetch.bind(broker);
    broker.handleReplicaFetch = (topicId, partition, ...rest) => {
      const topic = broker.replicas().find((r) => r.topicId === topicId && r.partition === partition)?.topic;
      const fetch = () => handleReplicaFetch(topicId, partition, ...rest);
      return topic === undefined
        ? fetch()
        : withHighWatermarkWatch(broker, topic, partition, hooks, node, fetch);
    };
    const truncateTo = broker.truncateTo.bind(broker);
    broker.truncateTo = (topic, partition, offset) => {
      const made = hooks.beforeTruncate(node, topic, partition, offset, false);
      cutting(cluster, broker, topic, partition, () => truncateTo(topic, partition, offset), made);
    };
    const truncateFully = broker.truncateFullyAndStartAt.bind(broker);
    broker.truncateFullyAndStartAt = (topic, partition, offset) => {
      const made = hooks.beforeTruncate(node, topic, partition, offset, true);
      cutting(cluster, broker, topic, partition, () => truncateFully(topic, partition, offset), made);
      hooks.afterTruncateFully(node, topic, partition);
    };
  };
  for (const id of cluster.runningBrokers()) wrap(cluster.broker(id));
  const startBroker = cluster.startBroker.bind(cluster);
  cluster.startBroker = (brokerId) => {
    const broker = startBroker(brokerId);
    wrap(broker);
    return broker;
  };
}

/**
 * Runs a leader truncation `cut` of `broker`'s partition, then `made` once the cut holds: when it returns,
 * or when it throws after the log changed (a cut that failed part way) or after the controller recorded it
 * (every replica owes it then, the leader too: made when it leads next, `Broker.settleOwedTruncation`). A
 * truncation refused before either (no active controller to record it: `Broker.truncateFullyAndStartAt`)
 * leaves the log as it was, and the simulation must not take what it holds for cut (failback regression
 * "a failback's truncation refused during a controller failover": the abandoned transaction it never
 * removed was taken for gone, so not excused as its coordinator's, and reported hanging after the failover).
 */
function cutting(
  cluster: KafkaCluster,
  broker: Broker,
  topic: string,
  partition: number,
  cut: () => void,
  made: (() => void) | undefined,
): void {
  const shape = () => {
    const log = broker.replica(topic, partition)?.log;
    return `${cluster.controller.metadataLog().length} ${log ? `${log.logStartOffset}..${log.logEndOffset}` : "none"}`;
  };
  const before = shape();
  try {
    cut();
  } catch (error) {
    if (shape() !== before) made?.();
    throw error;
  }
  made?.();
}

function readOnlyReasonSafe(hooks: GuardHooks, node: string, topic: string, partition: number) {
  try {
    return hooks.readOnlyReason(node, topic, partition);
  } catch {
    return undefined;
  }
}

/** The high watermark of `broker`'s replica (undefined: no replica). */
function highWatermarkOf(broker: Broker, topic: string, partition: number): bigint | undefined {
  try {
    return broker.replica(topic, partition)?.log.highWatermark;
  } catch {
    return undefined; // a closed or unreadable log
  }
}

/** Runs `append` and announces a high watermark move it made (see `GuardHooks.afterHighWatermarkMove`). */
function withHighWatermarkWatch<T>(
  broker: Broker,
  topic: string,
  partition: number,
  hooks: GuardHooks,
  node: string,
  append: () => T,
): T {
  const before = highWatermarkOf(broker, topic, partition);
  const result = append();
  const after = highWatermarkOf(broker, topic, partition);
  if (before !== undefined && after !== undefined && after > before)
    hooks.afterHighWatermarkMove(node, topic, partition, before);
  return result;
}
