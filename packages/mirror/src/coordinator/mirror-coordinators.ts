import type { Random, Uuid } from "@cluster-mirror/cluster";
import { ClusterError } from "@cluster-mirror/cluster";
import type { MirrorPartitionCommand, MirrorPartitionEvent } from "@cluster-mirror/machines";
import { KafkaError } from "@cluster-mirror/protocol";
import { MIRROR_STATE_TOPIC } from "../destination/embedded-state-log";
import type {
  DestinationCluster,
  FailoverPlan,
  FetcherEvents,
  MirrorCoordinators,
  MirrorPartitionKey,
  MirrorPartitionView,
} from "../ports";
import type { CoordinatorLoadStatus } from "./coordinator-load-waiters";
import type { CoordinatorRuntime } from "./coordinator-runtime";
import { type CoordinatorShard, refuseUnlessAtRest } from "./coordinator-shard";
import { mirrorStatePartitionFor } from "./mirror-state-partition";

/**
 * `MirrorCoordinators` and `FetcherEvents` over the coordinator runtimes of the destination's brokers: a
 * request for a partition goes to the runtime of the broker leading the partition's `__mirror_state`
 * partition (an in-process stand-in for the RPC to that broker), NOT_COORDINATOR when there is none.
 */
export class MirrorCoordinatorRouter implements MirrorCoordinators, FetcherEvents {
  private readonly runtimes = new Map<number, CoordinatorRuntime>();

  constructor(
    private readonly destination: DestinationCluster,
    private readonly numStatePartitions: number,
    private readonly random: Random,
  ) {}

  /** Adds a broker's runtime (replacing an older one of the same broker). */
  register(runtime: CoordinatorRuntime): void {
    this.runtimes.set(runtime.brokerId, runtime);
  }

  /** Removes a broker's runtime (it shut down or crashed). */
  unregister(brokerId: number): void {
    this.runtimes.delete(brokerId);
  }

  /** The runtime coordinating `key` now, or undefined. */
  coordinatorOf(key: MirrorPartitionKey): CoordinatorRuntime | undefined {
    return this.coordinatorAt(mirrorStatePartitionFor(key, this.numStatePartitions));
  }

  /** The committed view of `key` at the coordinator owning it now, or undefined (the key hashed once). */
  viewOf(key: MirrorPartitionKey): MirrorPartitionView | undefined {
    const partition = mirrorStatePartitionFor(key, this.numStatePartitions);
    return this.coordinatorAt(partition)?.shardFor(partition)?.view(key);
  }

  /**
   * Retries `key` now if it is FAILED and its retry timer waits for a destination leader
   * (`CoordinatorShard.retryNow`), which it has again. Whether it did.
   */
  retryNow(key: MirrorPartitionKey): boolean {
    return this.coordinatorOf(key)?.retryNow(key) ?? false;
  }

  /** The runtime of the broker leading `__mirror_state` partition `partition` now, or undefined. */
  private coordinatorAt(partition: number): CoordinatorRuntime | undefined {
    return this.runtimes.get(this.destination.leaderOf(MIRROR_STATE_TOPIC, partition));
  }

  /** Whether the coordinator of every `__mirror_state` partition is ACTIVE now (no key hashed). */
  allActive(): boolean {
    for (let p = 0; p < this.numStatePartitions; p++) {
      if (this.coordinatorAt(p)?.shardFor(p)?.state !== "ACTIVE") return false;
    }
    return true;
  }

  /** Where the coordinator of `key` stands: ACTIVE, its shard's state, or why there is none. */
  loadStatusOf(key: MirrorPartitionKey): CoordinatorLoadStatus {
    const statePartition = mirrorStatePartitionFor(key, this.numStatePartitions);
    const leader = this.destination.leaderOf(MIRROR_STATE_TOPIC, statePartition);
    const runtime = this.runtimes.get(leader);
    if (runtime === undefined) return { statePartition, state: "no running leader" };
    const shard = runtime.shardFor(statePartition);
    const state = shard?.state ?? "not loaded";
    if (state === "ACTIVE") return { statePartition, state };
    const why = state === "FAILED" && shard?.errorMessage ? ` (${shard.errorMessage})` : "";
    return { statePartition, state: `${state} on broker ${leader}${why}` };
  }

  /**
   * Sends a command to the coordinator of `key` as Kafka's WriteMirrorStates: to the broker leading the
   * key's `__mirror_state` partition, with the leader epoch this caller's metadata has for it. A coordinator
   * with another epoch refuses the write (FENCED_LEADER_EPOCH when the caller's is older,
   * UNKNOWN_LEADER_EPOCH when newer); both are retriable, and the write is retried once on fresh metadata.
   */
  command(key: MirrorPartitionKey, command: MirrorPartitionCommand): Promise<void> {
    return this.writeCommand(key, mirrorStatePartitionFor(key, this.numStatePartitions), command, true);
  }

  /** One WriteMirrorStates of `command` to the leader of `partition`; `retry`: once more on an epoch mismatch. */
  private writeCommand(
    key: MirrorPartitionKey,
    partition: number,
    command: MirrorPartitionCommand,
    retry: boolean,
  ): Promise<void> {
    const runtime = this.coordinatorAt(partition);
    if (runtime === undefined) {
      return Promise.reject(
        new ClusterError(
          "NOT_COORDINATOR",
          `no running coordinator for ${key.mirror}/${key.topic}-${key.partition} (its __mirror_state partition has no leader with a runtime); retry after the election`,
        ),
      );
    }
    const leaderEpoch = this.destination.leaderEpochOf(MIRROR_STATE_TOPIC, partition);
    // No closure per command: the continuations are shared, the retry is a method call.
    return runtime
      .writeMirrorStates(partition, leaderEpoch, [{ key, stateEpoch: -1, command }])
      .then(throwWriteError, (error: unknown) => {
        if (retry && isEpochMismatch(error)) return this.writeCommand(key, partition, command, false);
        throw error;
      });
  }

  describe(mirror?: string): MirrorPartitionView[] {
    return [...this.runtimes.values()].flatMap((r) => r.describe(mirror));
  }

  /**
   * The LME this cluster answers as a source (failback, chains) for a partition of topic `topicId`: the one
   * recorded under `owner.mirror`, the mirror the topic's `mirror.name` names (`parseMirrorNameConfig`), -1
   * when it recorded none. A topic is in one mirror at a time and every add names its mirror, so that
   * mirror's key holds the topic's latest failover; another mirror's key holds an earlier one, whose LME may
   * lie below that failover's (a failback cutting there drops records it need not) or name epochs of a
   * history a later add truncated away. StateEpochs of different keys count different keys' transitions, so
   * they cannot tell which failover came last.
   * A coordinator that owns the key but cannot answer yet is a retriable error, never "-1": a caller that
   * read -1 would truncate its whole log. COORDINATOR_LOAD_IN_PROGRESS while the owning `__mirror_state`
   * partition is still loading, COORDINATOR_NOT_AVAILABLE while it has no running leader.
   * MIRROR_FAILOVER_IN_PROGRESS (retriable) while the partition is failing over here: STOPPING, or not yet
   * STOPPED while `owner.removed` (its `mirror.name` has the `.removed` suffix). Its LME is recorded once
   * STOPPED; before, the recorded one is -1 or an earlier failover's, and a failback cutting there would
   * truncate records this cluster mirrored and still holds.
   */
  lastMirrorEpochOf(owner: { mirror: string; removed: boolean }, topicId: Uuid, partition: number): number {
    const { mirror } = owner;
    const key: MirrorPartitionKey = { mirror, topic: "", topicId, partition };
    const statePartition = mirrorStatePartitionFor(key, this.numStatePartitions);
    const shard = this.coordinatorAt(statePartition)?.shardFor(statePartition);
    const where = `mirror '${mirror}', topic id ${topicId} partition ${partition} (__mirror_state-${statePartition})`;
    if (shard === undefined || shard.state === "FAILED" || shard.state === "CLOSED") {
      throw new ClusterError(
        "COORDINATOR_NOT_AVAILABLE",
        `the mirror coordinator of ${where} is not available (${shard?.state ?? "no running leader"}); retry after its election`,
      );
    }
    if (shard.state !== "ACTIVE") {
      throw new KafkaError(
        "COORDINATOR_LOAD_IN_PROGRESS",
        14,
        true,
        `the mirror coordinator of ${where} is still loading its state; retry shortly`,
      );
    }
    // ReadMirrorStates, fenced by the epoch this caller's metadata has for the partition.
    const leaderEpoch = this.destination.leaderEpochOf(MIRROR_STATE_TOPIC, statePartition);
    let view: MirrorPartitionView | undefined;
    try {
      view = shard.readMirrorStates([key], leaderEpoch).states[0];
    } catch (error) {
      if (!isEpochMismatch(error)) throw error;
      throw new KafkaError(
        "COORDINATOR_LOAD_IN_PROGRESS",
        14,
        true,
        `the mirror coordinator of ${where} and this broker's metadata disagree on its leader epoch (${error instanceof Error ? error.message : String(error)}); retry shortly`,
      );
    }
    if (view !== undefined && (view.state === "STOPPING" || (owner.removed && view.state !== "STOPPED"))) {
      throw new KafkaError(
        "MIRROR_FAILOVER_IN_PROGRESS",
        -1,
        true,
        `${where} is failing over (${view.state}): the last mirror epoch of that failover is known once it is STOPPED; retry shortly`,
      );
    }
    return view !== undefined && view.lastMirrorEpoch >= 0 ? view.lastMirrorEpoch : -1;
  }

  /**
   * Tombstones every partition of `mirror` on the coordinator of each `__mirror_state` partition, which must
   * all be ACTIVE: a partition of the mirror may hash to any of them, and one still loading (or leaderless,
   * or FAILED) would keep its keys, so the deleted mirror's states, its LMEs among them, would come back
   * with its next load. Refused before anything is written, with the retriable error `lastMirrorEpochOf`
   * gives for that coordinator (COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE); the deletion is
   * then retried.
   */
  async tombstoneMirror(mirror: string): Promise<void> {
    const shards: CoordinatorShard[] = [];
    for (let p = 0; p < this.numStatePartitions; p++) {
      const shard = this.coordinatorAt(p)?.shardFor(p);
      if (shard?.state === "ACTIVE") {
        shards.push(shard);
        continue;
      }
      const why = `the mirror coordinator of __mirror_state-${p} is ${shard === undefined ? "not running (no leader with a runtime)" : shard.state}, so the states of mirror '${mirror}' it may hold cannot be tombstoned; retry after its load`;
      if (shard?.state === "LOADING") throw new KafkaError("COORDINATOR_LOAD_IN_PROGRESS", 14, true, why);
      throw new ClusterError("COORDINATOR_NOT_AVAILABLE", why);
    }
    // Every shard's partitions at rest before any writes a tombstone: a shard refusing after another had
    // begun would leave the mirror half deleted (its tombstoned partitions gone, the others kept).
    refuseUnlessAtRest(
      mirror,
      shards.flatMap((s) => s.partitionsNotAtRest(mirror)),
    );
    await Promise.all(shards.map((s) => s.tombstoneMirror(mirror)));
  }

  clearReadOnlyIfStopped(key: MirrorPartitionKey): boolean {
    const runtime = this.coordinatorAt(mirrorStatePartitionFor(key, this.numStatePartitions));
    return runtime?.clearReadOnlyIfStopped(key) ?? false;
  }

  failoverPlan(key: MirrorPartitionKey): FailoverPlan | undefined {
    const partition = mirrorStatePartitionFor(key, this.numStatePartitions);
    return this.coordinatorAt(partition)?.shardFor(partition)?.failoverPlan(key);
  }

  epochObserved(key: MirrorPartitionKey, batchEpoch: number, localLeaderEpoch: number): void {
    this.deliver(key, { type: "EPOCH_OBSERVED", batchEpoch, localLeaderEpoch });
  }

  partitionFailed(
    key: MirrorPartitionKey,
    message: string,
    retryable: boolean,
    afterProgress?: boolean,
  ): void {
    const random = this.random.next();
    this.deliver(
      key,
      afterProgress === true
        ? { type: "FAIL", message, retryable, random, afterProgress }
        : { type: "FAIL", message, retryable, random },
    );
  }

  private deliver(key: MirrorPartitionKey, event: MirrorPartitionEvent): void {
    const partition = mirrorStatePartitionFor(key, this.numStatePartitions);
    this.coordinatorAt(partition)?.observeAt(partition, key, event);
  }
}

/** Throws the error WriteMirrorStates returned for its one write, if any. */
function throwWriteError(results: readonly { error?: Error }[]): void {
  const error = results[0]?.error;
  if (error !== undefined) throw error;
}

/** Whether `error` is a coordinator refusing a request made with another leader epoch (both retriable). */
function isEpochMismatch(error: unknown): boolean {
  if (!(error instanceof KafkaError)) return false;
  return error.errorName === "FENCED_LEADER_EPOCH" || error.errorName === "UNKNOWN_LEADER_EPOCH";
}
