import {
  type AclBinding,
  type AclOperation,
  type AclResourceType,
  type Broker,
  CLUSTER_RESOURCE_NAME,
  ClusterError,
  type KafkaCluster,
  offsetKey,
  type Uuid,
  ZERO_UUID,
} from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import type {
  DescribeTopicsOptions,
  ListMirrorsOptions,
  SourceCluster,
  SourceFetchPartitionResult,
  SourceFetchRequest,
  SourceGroupOffsets,
  SourceMirrorInfo,
  SourcePartitionLeader,
  SourceTopicInfo,
} from "../ports";

/**
 * What an embedded source that itself runs mirrors can answer from its own `__mirror_state` (the
 * coordinator provides these); without them it answers like a plain Apache Kafka cluster.
 */
export interface EmbeddedSourceOptions {
  /** The LME this cluster recorded for a partition when it was failed over; default -1. */
  lastMirrorEpoch?: (topicId: Uuid, partition: number) => number | Promise<number>;
  /** The mirrors this cluster runs; default none. */
  listMirrors?: (options: ListMirrorsOptions) => SourceMirrorInfo[] | Promise<SourceMirrorInfo[]>;
  /** Principal the mirror's requests present to the source's authorizer (default User:ANONYMOUS). */
  principal?: string;
  /**
   * Fetched bytes are copied once, as a socket read from a network source would copy them: results are
   * marked `sharedBytes`, so the mirror's append copies them into the destination's own memory (checking
   * each chunk's CRC on the copy). Default false: the destination keeps views of the source's stored
   * bytes, which only an in-process source can offer (zero-copy).
   */
  copyOnFetch?: boolean;
}

/**
 * `SourceCluster` over an embedded `KafkaCluster`: consumer fetches (replica id -1, READ_UNCOMMITTED) to the
 * broker the request names, metadata from the controller's image, groups and ACLs from its coordinators.
 * Per-partition errors are answered in the results, never thrown; a request to a broker that is not
 * running (or not reachable) rejects as a whole with BROKER_NOT_AVAILABLE, as a lost connection would.
 */
export class EmbeddedSourceCluster implements SourceCluster {
  constructor(
    readonly cluster: KafkaCluster,
    private readonly options: EmbeddedSourceOptions = {},
  ) {}

  async clusterId(): Promise<string> {
    this.requireRunningBroker();
    return this.cluster.clusterId;
  }

  /**
   * Every topic whose name does not start with `__` and that the principal may DESCRIBE (Kafka's Metadata
   * for all topics silently leaves out the others), with partitions, leaders, epochs, and the dynamic configs
   * of the wanted ones it may DESCRIBE_CONFIGS (Kafka's DescribeConfigs refuses the others: their configs
   * stay unknown, never an empty set).
   */
  async describeTopics(options: DescribeTopicsOptions = {}): Promise<SourceTopicInfo[]> {
    this.requireRunningBroker();
    const topics: SourceTopicInfo[] = [];
    for (const t of this.cluster.controller.image.topicsById.values()) {
      if (t.name.startsWith("__") || !this.may("DESCRIBE", "TOPIC", t.name)) continue;
      const configsWanted =
        (options.configsOf?.(t.name) ?? true) && this.may("DESCRIBE_CONFIGS", "TOPIC", t.name);
      topics.push({
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({
          partition: p.partition,
          leaderId: p.leader,
          leaderEpoch: p.leaderEpoch,
        })),
        ...(configsWanted ? { configs: Object.fromEntries(t.configs) } : {}),
      });
    }
    return topics.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * A cluster none of whose brokers runs (closed, or every broker down) answers nothing, as a real one
   * would not: BROKER_NOT_AVAILABLE, rather than metadata read from its image.
   */
  private requireRunningBroker(): void {
    if (this.cluster.runningBrokers().length > 0) return;
    throw unreachable(
      `source cluster ${this.cluster.clusterId} has no running broker (it was closed, or every broker is down); start it, then retry`,
    );
  }

  /**
   * The named topics' partition leaders. A topic the principal may not DESCRIBE is left out as an unknown
   * one is (Kafka's Metadata answers it TOPIC_AUTHORIZATION_FAILED, without partitions).
   */
  async partitionLeaders(topics: readonly string[]): Promise<SourcePartitionLeader[]> {
    const leaders: SourcePartitionLeader[] = [];
    const image = this.cluster.controller.image;
    for (const name of new Set(topics)) {
      if (!this.may("DESCRIBE", "TOPIC", name)) continue;
      for (const p of image.topic(name)?.partitions ?? [])
        leaders.push({ topic: name, partition: p.partition, leaderId: p.leader, leaderEpoch: p.leaderEpoch });
    }
    return leaders;
  }

  async fetch(
    request: SourceFetchRequest,
  ): Promise<{ throttleTimeMs: number; partitions: SourceFetchPartitionResult[] }> {
    const broker = this.cluster.broker(request.brokerId);
    if (!broker?.isRunning) {
      throw unreachable(
        `source broker ${request.brokerId} of cluster ${this.cluster.clusterId} is not reachable; refresh the source metadata and fetch from the partitions' new leaders`,
      );
    }
    // As Kafka caps a consumer's fetch (KafkaApis.handleFetchRequest): to what the client-id's fetch quota
    // lets it take in one quota window, so the quota bounds the data, not only the wait after it.
    const quotaWindowBytes = this.cluster.quotas.maxValueInQuotaWindow("fetch", request.clientId);
    let remaining = Math.min(request.maxBytes, quotaWindowBytes);
    let throttleTimeMs = 0;
    let recordedBytes = 0;
    const partitions: SourceFetchPartitionResult[] = [];
    const image = this.cluster.controller.image;
    for (const p of request.partitions) {
      // By name alone without an id (or with Kafka's ZERO_UUID, "none"), as Fetch v12 asks.
      const byId = p.topicId !== undefined && p.topicId !== ZERO_UUID;
      const current = byId ? image.topic(p.topic)?.topicId : undefined;
      if (byId && p.topicId !== undefined && current !== p.topicId) {
        partitions.push(unknownTopicId(p.topic, p.partition, p.topicId, current));
        continue;
      }
      // Kafka authorizes every partition of a fetch before it reads any: one the principal may not READ is
      // refused even where the size limit leaves it no bytes, and without its offsets.
      const refused = this.readRefusal(p.topic);
      if (refused) {
        partitions.push(refusedPartition(p.topic, p.partition, refused));
        continue;
      }
      if (remaining <= 0) {
        partitions.push(this.offsetsOnly(broker, p.topic, p.partition));
        continue;
      }
      try {
        const response = broker.fetch({
          topic: p.topic,
          partition: p.partition,
          fetchOffset: p.fetchOffset,
          maxBytes: Math.min(p.maxBytes, remaining),
          isolationLevel: "read_uncommitted",
          currentLeaderEpoch: p.currentLeaderEpoch,
          lastFetchedEpoch: p.lastFetchedEpoch,
          clientId: request.clientId,
          principal: this.options.principal,
        });
        remaining -= response.sizeInBytes;
        recordedBytes += response.sizeInBytes;
        if (response.throttleTimeMs > throttleTimeMs) throttleTimeMs = response.throttleTimeMs;
        const result: SourceFetchPartitionResult = {
          topic: p.topic,
          partition: p.partition,
          recordSlices: response.recordSlices,
          highWatermark: response.highWatermark,
          lastStableOffset: response.lastStableOffset,
          logStartOffset: response.logStartOffset,
        };
        if (this.options.copyOnFetch === true && response.recordSlices.length > 0) result.sharedBytes = true;
        if (response.divergingEpoch) result.divergingEpoch = response.divergingEpoch;
        const rewrites = image.partition(p.topic, p.partition)?.logRewrites;
        if (rewrites) result.logRewrites = rewrites;
        partitions.push(result);
      } catch (error) {
        const result = { ...this.offsetsOnly(broker, p.topic, p.partition), error: asKafkaError(error) };
        // An OFFSET_OUT_OF_RANGE past the end may be this log's cut: the fetcher compares before it waits.
        const rewrites = image.partition(p.topic, p.partition)?.logRewrites;
        if (rewrites) result.logRewrites = rewrites;
        partitions.push(result);
      }
    }
    if (throttleTimeMs > 0) {
      // Kafka answers a fetch over its client's quota without data, and takes the bytes back from the
      // quota (KafkaApis.handleFetchRequest: `unrecordQuotaSensor`, `getThrottledResponse`): the client
      // waits the throttle time and fetches them again.
      this.cluster.quotas.unrecord("fetch", request.clientId, recordedBytes);
      for (const p of partitions) {
        p.recordSlices = [];
        delete p.sharedBytes;
      }
    }
    return { throttleTimeMs, partitions };
  }

  async listOffsets(topic: string, partition: number, timestamp: bigint, topicId?: Uuid): Promise<bigint> {
    this.requireRunningBroker();
    this.checkDescribe(topic);
    this.checkTopicId(topic, partition, topicId);
    return this.cluster.leaderFor(topic, partition).listOffsets(topic, partition, timestamp).offset;
  }

  /**
   * Groups with committed offsets; `active` when the group has members right now. As on Kafka, only the
   * groups the principal may DESCRIBE (DescribeGroups and OffsetFetch refuse the others), and only the
   * offsets of topics it may DESCRIBE (OffsetFetch leaves the others out).
   */
  async listGroupOffsets(): Promise<(SourceGroupOffsets & { active: boolean })[]> {
    const groups = this.cluster.groups;
    const out: (SourceGroupOffsets & { active: boolean })[] = [];
    for (const { groupId } of groups.listGroups()) {
      if (!this.may("DESCRIBE", "GROUP", groupId)) continue;
      const committed = groups.fetchOffsets(groupId);
      if (committed.size === 0) continue;
      const offsets: SourceGroupOffsets["offsets"] = [];
      for (const [key, c] of committed) {
        const tp = parseOffsetKey(key);
        if (!tp || !this.may("DESCRIBE", "TOPIC", tp.topic)) continue;
        offsets.push({ ...tp, offset: c.offset, leaderEpoch: c.leaderEpoch, metadata: c.metadata });
      }
      out.push({ groupId, offsets, active: groups.describeGroup(groupId).members.length > 0 });
    }
    return out;
  }

  /** Every binding; DescribeAcls needs DESCRIBE on the CLUSTER, as on Kafka (CLUSTER_AUTHORIZATION_FAILED). */
  async describeAcls(): Promise<AclBinding[]> {
    this.cluster.authorizer.check({
      principal: this.principal(),
      operation: "DESCRIBE",
      resourceType: "CLUSTER",
      resourceName: CLUSTER_RESOURCE_NAME,
    });
    return this.cluster.authorizer.describeAcls();
  }

  async endOffsetForEpoch(
    topic: string,
    partition: number,
    leaderEpoch: number,
    topicId?: Uuid,
  ): Promise<{ leaderEpoch: number; endOffset: bigint }> {
    this.requireRunningBroker();
    // Kafka lets a broker (CLUSTER_ACTION) ask without DESCRIBE: the API was inter-broker before KIP-320.
    const broker = {
      operation: "CLUSTER_ACTION",
      resourceType: "CLUSTER",
      resourceName: CLUSTER_RESOURCE_NAME,
    } as const;
    if (!this.cluster.authorizer.authorize({ principal: this.principal(), ...broker }))
      this.checkDescribe(topic);
    this.checkTopicId(topic, partition, topicId);
    const log = this.cluster.leaderFor(topic, partition).replica(topic, partition)?.log;
    if (!log) {
      throw new ClusterError(
        "NOT_LEADER_OR_FOLLOWER",
        `${topic}-${partition}: the source's leader holds no replica`,
      );
    }
    const answer = log.endOffsetForEpoch(leaderEpoch);
    return { leaderEpoch: answer.epoch, endOffset: answer.endOffset };
  }

  async lastMirrorEpoch(topicId: Uuid, partition: number): Promise<number> {
    return this.options.lastMirrorEpoch ? await this.options.lastMirrorEpoch(topicId, partition) : -1;
  }

  async listMirrors(options: ListMirrorsOptions = {}): Promise<SourceMirrorInfo[]> {
    return this.options.listMirrors ? await this.options.listMirrors(options) : [];
  }

  /**
   * Kafka's ListOffsets and OffsetsForLeaderEpoch need DESCRIBE on the topic (READ implies it): without it
   * TOPIC_AUTHORIZATION_FAILED, asked before the topic is looked up, so whether it exists is not told.
   */
  private checkDescribe(topic: string): void {
    this.cluster.authorizer.check({
      principal: this.principal(),
      operation: "DESCRIBE",
      resourceType: "TOPIC",
      resourceName: topic,
    });
  }

  /** The authorization error a Fetch of `topic` gets (no READ), or undefined when it may read it. */
  private readRefusal(topic: string): KafkaError | undefined {
    try {
      this.cluster.authorizer.check({
        principal: this.principal(),
        operation: "READ",
        resourceType: "TOPIC",
        resourceName: topic,
      });
      return undefined;
    } catch (error) {
      return asKafkaError(error);
    }
  }

  /** True when the source's authorizer allows the mirror's principal the operation. */
  private may(operation: AclOperation, resourceType: AclResourceType, resourceName: string): boolean {
    return this.cluster.authorizer.authorize({
      principal: this.principal(),
      operation,
      resourceType,
      resourceName,
    });
  }

  /** Who the mirror's requests are from, for the source's authorizer. */
  private principal(): string {
    return this.options.principal ?? "User:ANONYMOUS";
  }

  /** Rejects with UNKNOWN_TOPIC_ID when `topicId` is given and the topic of this name has another id or none. */
  private checkTopicId(topic: string, partition: number, topicId: Uuid | undefined): void {
    if (topicId === undefined || topicId === ZERO_UUID) return;
    const current = this.cluster.controller.image.topic(topic)?.topicId;
    if (current !== topicId) throw unknownTopicIdError(topic, partition, topicId, current);
  }

  /** A partition left out of the response (size limit reached) or failed: offsets only, no records. */
  private offsetsOnly(broker: Broker, topic: string, partition: number): SourceFetchPartitionResult {
    const log = broker.replica(topic, partition)?.log;
    return {
      topic,
      partition,
      recordSlices: [],
      highWatermark: log?.highWatermark ?? -1n,
      lastStableOffset: log?.lastStableOffset ?? -1n,
      logStartOffset: log?.logStartOffset ?? -1n,
    };
  }
}

/** The answer Kafka's Fetch v13+ gives a partition of a topic id it does not know: an error, no offsets. */
function unknownTopicId(
  topic: string,
  partition: number,
  wanted: Uuid,
  current: Uuid | undefined,
): SourceFetchPartitionResult {
  return refusedPartition(topic, partition, unknownTopicIdError(topic, partition, wanted, current));
}

/**
 * Kafka's answer for a partition it refuses before reading it (a topic id it does not know, no READ): the
 * error, no records, no offsets.
 */
function refusedPartition(topic: string, partition: number, error: KafkaError): SourceFetchPartitionResult {
  return {
    topic,
    partition,
    recordSlices: [],
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
    error,
  };
}

/** UNKNOWN_TOPIC_ID (retriable, as in Kafka): the topic of this name is not the one with id `wanted`. */
function unknownTopicIdError(
  topic: string,
  partition: number,
  wanted: Uuid,
  current: Uuid | undefined,
): ClusterError {
  const now = current === undefined ? "has no topic of that name" : `knows '${topic}' as topic id ${current}`;
  return new ClusterError(
    "UNKNOWN_TOPIC_ID",
    `${topic}-${partition}: the source no longer has topic id ${wanted} (it ${now}): the topic was deleted, or deleted and created again; nothing of it is copied`,
  );
}

/** `offsetKey` is `topic:partition`; the partition is after the last colon. */
function parseOffsetKey(key: string): { topic: string; partition: number } | undefined {
  const i = key.lastIndexOf(":");
  const partition = Number(key.slice(i + 1));
  const topic = key.slice(0, i);
  return i > 0 && Number.isInteger(partition) && offsetKey({ topic, partition }) === key
    ? { topic, partition }
    : undefined;
}

function asKafkaError(error: unknown): KafkaError {
  if (error instanceof KafkaError) return error;
  return new KafkaError(
    "UNKNOWN_SERVER_ERROR",
    -1,
    false,
    error instanceof Error ? error.message : String(error),
    {
      cause: error,
    },
  );
}

/**
 * A source (or source broker) that does not answer: a lost connection, which Kafka's clients retry
 * (NetworkException, DisconnectException; the kafkajs source's connection errors are retriable too). Named
 * BROKER_NOT_AVAILABLE, but retriable, unlike Kafka's error code 8: with that code's flag a source down
 * while a partition prepared failed the partition for good (FAILED until an operator recovered it).
 */
function unreachable(message: string): KafkaError {
  return new KafkaError("BROKER_NOT_AVAILABLE", 8, true, message);
}
