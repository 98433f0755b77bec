import type { LocalReplica } from "../ports";
import { type DestinationLeaderRanOn, leaderMovedOnDestination } from "./no-destination-leader-error";

/**
 * The leader replica a partition step runs on, as the executor hands it out: each call goes to `replica`,
 * and what it throws or rejects with because that replica stopped leading in the middle of the step (its
 * broker crashed while the step waited for the in-sync replicas: NOT_LEADER_OR_FOLLOWER) becomes a
 * NoDestinationLeaderError, so the FAILED it commits retries at the election of the next leader, not at the
 * end of its backoff. Only the destination's replica is wrapped: the same errors from the source say nothing
 * of a destination election. `ranOn`, the leader and epoch the metadata named as the step took the replica,
 * goes with the error: its FAILED retries at once only once that leader changed (`leaderChangedSince`).
 */
export class DestinationLeaderReplica implements LocalReplica {
  constructor(
    private readonly replica: LocalReplica,
    private readonly ranOn?: DestinationLeaderRanOn,
  ) {}

  get topic(): string {
    return this.replica.topic;
  }
  get partition(): number {
    return this.replica.partition;
  }

  logStartOffset(): bigint {
    return this.call(() => this.replica.logStartOffset());
  }
  logEndOffset(): bigint {
    return this.call(() => this.replica.logEndOffset());
  }
  highWatermark(): bigint {
    return this.call(() => this.replica.highWatermark());
  }
  leaderEpoch(): number {
    return this.call(() => this.replica.leaderEpoch());
  }
  latestEpoch(): number {
    return this.call(() => this.replica.latestEpoch());
  }
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } {
    return this.call(() => this.replica.endOffsetForEpoch(epoch));
  }
  read(offset: bigint, maxBytes: number): readonly Buffer[] {
    return this.call(() => this.replica.read(offset, maxBytes));
  }
  appendAsIs(
    batches: Buffer | readonly Buffer[],
    options?: { transferOwnership?: boolean },
  ): { batchCount: number; lastOffset: bigint | undefined } {
    return this.call(() => this.replica.appendAsIs(batches, options));
  }
  truncateTo(offset: bigint): void {
    this.call(() => this.replica.truncateTo(offset));
  }
  truncateFullyAndStartAt(offset: bigint): void {
    this.call(() => this.replica.truncateFullyAndStartAt(offset));
  }
  followSourceLogStart(offset: bigint): bigint {
    return this.call(() => this.replica.followSourceLogStart(offset));
  }
  followersTruncated(): boolean {
    return this.call(() => this.replica.followersTruncated());
  }
  ongoingTransactions(): { producerId: bigint; producerEpoch: number; firstOffset: bigint }[] {
    return this.call(() => this.replica.ongoingTransactions());
  }
  appendControlBatch(batch: Buffer): void {
    this.call(() => this.replica.appendControlBatch(batch));
  }
  endsWithPidResetAbove(epoch: number): boolean {
    return this.call(() => this.replica.endsWithPidResetAbove(epoch));
  }
  hasDataBatchAbove(epoch: number): boolean {
    return this.call(() => this.replica.hasDataBatchAbove(epoch));
  }
  awaitReplicated(offset: bigint): Promise<void> {
    return this.call(() => this.replica.awaitReplicated(offset)).catch((error: unknown) => {
      throw leaderMovedOnDestination(error, this.ranOn);
    });
  }
  setReadOnly(readOnly: boolean): void {
    this.call(() => this.replica.setReadOnly(readOnly));
  }

  private call<T>(f: () => T): T {
    try {
      return f();
    } catch (error) {
      throw leaderMovedOnDestination(error, this.ranOn);
    }
  }
}
