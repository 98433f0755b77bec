import { type Broker, ClusterError, type KafkaCluster, type Partition } from "@cluster-mirror/cluster";
import type { LocalReplica } from "../ports";

/**
 * `LocalReplica` over one broker's leader replica of the embedded cluster. Every call looks the broker and
 * its `Partition` up again, so a replica that lost leadership (or a crashed broker) answers with Kafka's
 * NOT_LEADER_OR_FOLLOWER instead of acting on a stale object.
 */
export class EmbeddedLocalReplica implements LocalReplica {
  constructor(
    private readonly cluster: KafkaCluster,
    readonly brokerId: number,
    readonly topic: string,
    readonly partition: number,
  ) {}

  private broker(): Broker {
    const broker = this.cluster.localBroker(this.brokerId);
    if (!broker?.isRunning) {
      throw new ClusterError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${this.brokerId} is not running, so it no longer leads ${this.topic}-${this.partition}; look the leader up again`,
      );
    }
    return broker;
  }

  private leader(): Partition {
    const p = this.broker().replica(this.topic, this.partition);
    if (!p?.isLeader) {
      throw new ClusterError(
        "NOT_LEADER_OR_FOLLOWER",
        `broker ${this.brokerId} no longer leads ${this.topic}-${this.partition}; look the leader up again`,
      );
    }
    return p;
  }

  logStartOffset(): bigint {
    return this.leader().log.logStartOffset;
  }
  logEndOffset(): bigint {
    return this.leader().log.logEndOffset;
  }
  highWatermark(): bigint {
    return this.leader().log.highWatermark;
  }
  leaderEpoch(): number {
    return this.leader().leaderEpoch;
  }
  latestEpoch(): number {
    return this.leader().log.lastWrittenEpoch ?? -1;
  }
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } {
    return this.leader().log.endOffsetForEpoch(epoch);
  }

  /** Through `Broker.appendAsIs`, so the followers are woken and the high watermark moves. */
  appendAsIs(
    batches: Buffer | readonly Buffer[],
    options: { transferOwnership?: boolean } = {},
  ): { batchCount: number; lastOffset: bigint | undefined } {
    const info = this.broker().appendAsIs(this.topic, this.partition, batches, options);
    return { batchCount: info.batchCount, lastOffset: info.lastOffset };
  }
  read(offset: bigint, maxBytes: number): readonly Buffer[] {
    const log = this.leader().log;
    if (offset >= log.logEndOffset) return [];
    return log.read(offset, maxBytes, "read_uncommitted", { fetchUpTo: "log_end" }).recordSlices;
  }

  truncateTo(offset: bigint): void {
    this.broker().truncateTo(this.topic, this.partition, offset);
  }
  followSourceLogStart(offset: bigint): bigint {
    return this.broker().followSourceLogStart(this.topic, this.partition, offset);
  }
  truncateFullyAndStartAt(offset: bigint): void {
    this.broker().truncateFullyAndStartAt(this.topic, this.partition, offset);
  }
  followersTruncated(): boolean {
    return this.broker().followersTruncated(this.topic, this.partition);
  }

  /** Open transactions with their producer epoch (an ABORT marker must carry the producer's epoch). */
  ongoingTransactions(): { producerId: bigint; producerEpoch: number; firstOffset: bigint }[] {
    const log = this.leader().log;
    const open = log.ongoingTransactions();
    if (open.length === 0) return [];
    const epochs = new Map(log.producerStateSnapshot().map((e) => [e.producerId, e.producerEpoch]));
    return open.map((t) => ({ ...t, producerEpoch: epochs.get(t.producerId) ?? 0 }));
  }

  appendControlBatch(batch: Buffer): void {
    this.broker().appendControlBatch(this.topic, this.partition, batch);
  }

  awaitReplicated(offset: bigint): Promise<void> {
    return this.broker().awaitReplicated(this.topic, this.partition, offset);
  }

  /**
   * O(1) unless the log ends with a barrier: the log tracks its last batch's control type (a failover of
   * many partitions reads no batch), then the barrier's header gives its epoch.
   */
  endsWithPidResetAbove(epoch: number): boolean {
    const log = this.leader().log;
    return log.endsWithPidReset() && (log.lastBatchLeaderEpoch() ?? -1) > epoch;
  }

  hasDataBatchAbove(epoch: number): boolean {
    return this.leader().log.hasDataBatchAbove(epoch);
  }

  /**
   * Sets or clears the partition's read-only flag in the cluster metadata (through the controller), which
   * every replica reads: a restarted replica or a new leader refuses produces until STOPPED clears it.
   */
  setReadOnly(readOnly: boolean): void {
    this.leader();
    this.broker().setReadOnly(this.topic, this.partition, readOnly);
  }
}
