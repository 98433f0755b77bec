import type { KafkaCluster, Uuid } from "@cluster-mirror/cluster";
import { epochBefore, leaderLog } from "../metadata/destination-logs";
import type { DestinationCluster, LocalReplica } from "../ports";
import { EmbeddedLocalReplica } from "./embedded-local-replica";
import { type LiveTransaction, liveTransactionsOn } from "./live-transactions";

/**
 * What the coordinator needs beyond `DestinationCluster` to rehydrate a `__mirror_state` key (which holds a
 * topic id, not a name) into a partition actor: the topic's name and its `mirror.name` config.
 */
export interface DestinationTopicLookup {
  /** The name of the topic with this id, or undefined when no such topic exists. */
  topicName(topicId: Uuid): string | undefined;
  /** A dynamic topic config's value, or undefined when unset (or the topic does not exist). */
  topicConfig(topic: string, name: string): string | undefined;
}

/** `DestinationCluster` over an embedded `KafkaCluster`: replicas of its brokers, requests to its controller. */
export class EmbeddedDestination implements DestinationCluster, DestinationTopicLookup {
  constructor(readonly cluster: KafkaCluster) {}

  get clusterId(): string {
    return this.cluster.clusterId;
  }

  replica(brokerId: number, topic: string, partition: number): LocalReplica | undefined {
    const p = this.cluster.localBroker(brokerId)?.replica(topic, partition);
    return p?.isLeader ? new EmbeddedLocalReplica(this.cluster, brokerId, topic, partition) : undefined;
  }

  leaderOf(topic: string, partition: number): number {
    return this.cluster.controller.image.partition(topic, partition)?.leader ?? -1;
  }

  leaderEpochOf(topic: string, partition: number): number {
    const p = this.cluster.controller.image.partition(topic, partition);
    return p === undefined || p.leader < 0 ? -1 : p.leaderEpoch;
  }

  topicIdOf(topic: string): Uuid | undefined {
    return this.cluster.controller.image.topic(topic)?.topicId;
  }

  /**
   * The embedded cluster has one transaction coordinator, always loaded: its state is always known. An end
   * marker the cluster holds back from this partition while it was read-only (`heldTxnMarkers`) is written
   * at its next housekeeping pass: its transaction is live too, while it is still open where it was held.
   */
  liveTransactions(topic: string, partition: number): LiveTransaction[] {
    const tp = { topic, partition };
    return [
      ...liveTransactionsOn(this.cluster.transactions.listTransactions(), tp),
      ...this.cluster
        .openHeldTxnMarkers(tp)
        .map((m) => ({ producerId: m.producerId, producerEpoch: m.producerEpoch })),
    ];
  }

  controllerActive(): boolean {
    return this.cluster.controller.isAvailable;
  }

  onControllerActive(listener: () => void): () => void {
    return this.cluster.controller.onAvailable(listener);
  }

  setMirrorReadOnly(topic: string, partition: number, readOnly: boolean): void {
    this.cluster.controller.setMirrorReadOnly(topic, partition, readOnly);
  }

  mirrorReadOnlyHeld(topic: string, partition: number): boolean {
    const p = this.cluster.controller.image.partition(topic, partition);
    return p?.mirrorReadOnly === true && p.mirrorReadOnlyByName !== true;
  }

  clampGroupOffsets(topic: string, partition: number): void {
    const log = leaderLog(this.cluster, topic, partition);
    if (log === undefined) return;
    const end = log.logEndOffset;
    this.cluster.groups.clampOffsets({ topic, partition }, end, epochBefore(log, end));
  }

  createMirrorTopic(request: {
    name: string;
    topicId: Uuid;
    numPartitions: number;
    replicationFactor?: number;
    configs: Record<string, string>;
  }): void {
    this.cluster.controller.createTopic({
      name: request.name,
      topicId: request.topicId,
      numPartitions: request.numPartitions,
      replicationFactor: request.replicationFactor,
      configs: request.configs,
    });
  }

  createPartitions(topic: string, totalCount: number): void {
    this.cluster.controller.createPartitions(topic, totalCount);
  }

  alterTopicConfigs(topic: string, ops: { name: string; op: "SET" | "DELETE"; value?: string }[]): void {
    this.cluster.controller.incrementalAlterConfigs({ type: "topic", name: topic }, ops);
  }

  bumpLeaderEpochs(requests: { topic: string; partition: number; minLeaderEpoch: number }[]): number[] {
    return this.cluster.controller.bumpLeaderEpochs(requests);
  }

  /** One controller request (`bumpLeaderEpochsBatch`): one PartitionChange record per partition, one batch. */
  bumpLeaderEpochsBatch(
    requests: readonly { topic: string; partition: number; minLeaderEpoch: number }[],
  ): ({ leaderEpoch: number; error?: undefined } | { leaderEpoch?: undefined; error: Error })[] {
    return this.cluster.controller.bumpLeaderEpochsBatch(requests);
  }

  topicName(topicId: Uuid): string | undefined {
    return this.cluster.controller.image.topicsById.get(topicId)?.name;
  }

  topicConfig(topic: string, name: string): string | undefined {
    return this.cluster.controller.image.topic(topic)?.configs.get(name);
  }
}
