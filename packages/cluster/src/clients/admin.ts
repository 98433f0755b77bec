import type { AclBinding, AclBindingFilter, AclOperation, AclPatternType, AclResourceType } from "../acls";
import type { ConfigResourceDescription, ConfigSourceName } from "../admin-handler";
import type { AlterConfigOp } from "../controller";
import { ClusterError, type KafkaErrorName } from "../errors";
import { shownValue } from "../shown-value";
import type { TopicPartition } from "../transaction-coordinator";
import { checkAclFilter, checkCreateAclsArguments, checkDeleteAclsArguments } from "./acl-argument-checks";
import {
  checkCreatePartitionsArguments,
  checkCreateTopicsArguments,
  checkDeleteTopicsArguments,
  checkFetchTopicMetadataArguments,
} from "./admin-argument-checks";
import { alterConfigOpName, checkConfigResources } from "./config-argument-checks";
import {
  checkFetchOffsetsTopics,
  checkGroupIds,
  checkSetOffsetsPartitions,
  groupIdArgument,
} from "./group-offsets-argument-checks";
import type { ClientContext } from "./kafka";
import { offsetArgument, partitionArgument, topicArgument } from "./offset-argument";
import { Retrier, type RetryOptions, sleep } from "./retry";
import {
  type AclEntry,
  type AclFilter,
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  type AlterConfigOpTypes,
  ConfigResourceTypes,
  ConfigSource,
  ResourcePatternTypes,
} from "./types";

/** Admin client settings. */
export interface AdminConfig {
  retry?: RetryOptions;
}

/** kafkajs's `ITopicConfig`. */
export interface ITopicConfig {
  topic: string;
  /** Default 1 (kafkajs's -1: the broker default). */
  numPartitions?: number;
  /** Default min(3, live brokers). */
  replicationFactor?: number;
  replicaAssignment?: { partition: number; replicas: number[] }[];
  configEntries?: { name: string; value: string }[];
}

/** kafkajs's `PartitionMetadata`, plus our `leaderEpoch`. */
export interface PartitionMetadataView {
  partitionErrorCode: number;
  partitionId: number;
  leader: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
  leaderEpoch: number;
}

/** kafkajs's `ITopicMetadata`, plus our `topicId`. */
export interface TopicMetadataView {
  name: string;
  topicId: string;
  partitions: PartitionMetadataView[];
}

/** A config resource as kafkajs names it (numeric `ConfigResourceTypes`). */
export interface ResourceConfigQuery {
  type: number;
  name: string;
  configNames?: string[];
}

/** kafkajs's `DescribeConfigResponse`. */
export interface DescribeConfigResponse {
  resources: {
    configEntries: {
      configName: string;
      configValue: string | null;
      isDefault: boolean;
      configSource: number;
      isSensitive: boolean;
      readOnly: boolean;
      configSynonyms: { configName: string; configValue: string | null; configSource: number }[];
    }[];
    errorCode: number;
    errorMessage: string | null;
    resourceName: string;
    resourceType: number;
  }[];
  throttleTime: number;
}

/** A resource of `alterConfigs`. */
export interface IResourceConfig {
  type: number;
  name: string;
  configEntries: { name: string; value: string }[];
}

/** kafkajs's `alterConfigs` answer. */
export interface AlterConfigsResponse {
  resources: { errorCode: number; errorMessage: string | null; resourceName: string; resourceType: number }[];
  throttleTime: number;
}

/** A resource of `incrementalAlterConfigs` (our extra; kafkajs 2.2.4 has none). */
export interface IncrementalResourceConfig {
  type: number;
  name: string;
  /** `operation`: "SET", "DELETE", "APPEND", "SUBTRACT", or its Kafka id (`AlterConfigOpTypes`). */
  configEntries: {
    name: string;
    value?: string;
    operation: AlterConfigOp["op"] | (typeof AlterConfigOpTypes)[keyof typeof AlterConfigOpTypes];
  }[];
}

/** kafkajs's `GroupDescription`, plus our decoded `assignment` per member. */
export interface GroupDescriptionView {
  groupId: string;
  errorCode: number;
  members: {
    memberId: string;
    clientId: string;
    clientHost: string;
    memberMetadata: Buffer;
    memberAssignment: Buffer;
    assignment: TopicPartition[];
  }[];
  protocol: string;
  protocolType: string;
  state: string;
}

/**
 * A kafkajs-shaped admin client on the embedded cluster. Every call goes through the server-side
 * `AdminHandler`, which checks the principal's ACLs first. Failures are `ClusterError`s with Kafka's names.
 */
export class Admin {
  private readonly retrier: Retrier;

  constructor(
    private readonly client: ClientContext,
    config: AdminConfig,
  ) {
    this.retrier = new Retrier(config.retry ?? client.retry, client.scheduler, client.random);
  }

  /** Nothing to open in process; ClusterClosedError once the cluster is closed. */
  async connect(): Promise<void> {
    this.client.cluster.ensureOpen("connect an admin client");
  }

  /** Nothing to close in process. */
  async disconnect(): Promise<void> {}

  /**
   * Creates topics. As kafkajs: resolves false when every failure was TOPIC_ALREADY_EXISTS (the other
   * topics are created), true when all were created; any other failure is thrown. With `waitForLeaders`
   * (the default) it waits until every new partition has a running leader.
   */
  async createTopics(args: {
    topics: ITopicConfig[];
    validateOnly?: boolean;
    waitForLeaders?: boolean;
    timeout?: number;
  }): Promise<boolean> {
    checkCreateTopicsArguments(args);
    const names = args.topics.map((t) => t.topic);
    if (new Set(names).size !== names.length) {
      throw new ClusterError(
        "INVALID_REQUEST",
        "invalid topics array: it cannot have multiple entries for the same topic",
      );
    }
    const results = this.handler.createTopics(
      this.ctx,
      args.topics.map((t) => ({
        name: t.topic,
        // As Kafka's CreateTopics: -1 (or none) is the default; any other value below 1 is refused
        // (INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR), not taken for the default. null is sent as
        // kafkajs's encoder writes it: 0 (its -1 default stands in for a missing field only).
        ...(t.numPartitions === undefined || t.numPartitions === -1
          ? {}
          : { numPartitions: t.numPartitions ?? 0 }),
        ...(t.replicationFactor === undefined || t.replicationFactor === -1
          ? {}
          : { replicationFactor: t.replicationFactor ?? 0 }),
        ...(t.replicaAssignment && t.replicaAssignment.length > 0
          ? {
              replicaAssignment: [...t.replicaAssignment]
                .sort((a, b) => a.partition - b.partition)
                .map((a) => [...a.replicas]),
            }
          : {}),
        ...(t.configEntries
          ? { configs: Object.fromEntries(t.configEntries.map((e) => [e.name, e.value])) }
          : {}),
      })),
      args.validateOnly ?? false,
    );
    const errors = results.flatMap((r, i) => (r.error ? [nullCountHint(r.error, args.topics[i]!)] : []));
    const other = errors.find((e) => e.errorName !== "TOPIC_ALREADY_EXISTS");
    if (other) throw other;
    if (!args.validateOnly && (args.waitForLeaders ?? true)) {
      const created = results.filter((r) => !r.error).map((r) => r.topic);
      await this.waitForLeaders(created, args.timeout ?? 5000);
    }
    return errors.length === 0;
  }

  /** Deletes topics; the first failure is thrown (after the others were deleted). */
  async deleteTopics(args: { topics: string[]; timeout?: number }): Promise<void> {
    checkDeleteTopicsArguments(args);
    const failed = this.handler.deleteTopics(this.ctx, args.topics).find((r) => r.error);
    if (failed?.error) throw failed.error;
  }

  /** Raises partition counts (`count` is the new total). */
  async createPartitions(args: {
    validateOnly?: boolean;
    timeout?: number;
    topicPartitions: { topic: string; count: number; assignments?: number[][] }[];
  }): Promise<boolean> {
    checkCreatePartitionsArguments(args);
    // As kafkajs encodes them: an empty `assignments` is none (null on the wire), the partitions are placed.
    const requests = args.topicPartitions.map(({ topic, count, assignments }) => ({
      topic,
      count,
      ...(assignments === undefined || assignments === null || assignments.length === 0
        ? {}
        : { assignments }),
    }));
    const failed = this.handler
      .createPartitions(this.ctx, requests, args.validateOnly ?? false)
      .find((r) => r.error);
    if (failed?.error) throw failed.error;
    return true;
  }

  /** Names of every topic the principal may describe. */
  async listTopics(): Promise<string[]> {
    return this.handler.metadata(this.ctx).map((t) => t.name);
  }

  /** Topic metadata (kafkajs shape, plus topicId and leaderEpoch); all describable topics if none named. */
  async fetchTopicMetadata(args: { topics?: string[] } = {}): Promise<{ topics: TopicMetadataView[] }> {
    checkFetchTopicMetadataArguments(args);
    const topics = this.handler.metadata(
      this.ctx,
      args.topics && args.topics.length > 0 ? args.topics : undefined,
    );
    const failed = topics.find((t) => t.error);
    if (failed?.error) throw failed.error;
    const live = new Set(this.client.cluster.controller.image.liveBrokers());
    return {
      topics: topics.map((t) => ({
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({
          partitionErrorCode: p.leader < 0 ? 5 : 0,
          partitionId: p.partition,
          leader: p.leader,
          replicas: [...p.replicas],
          isr: [...p.isr],
          offlineReplicas: p.replicas.filter((r) => !live.has(r)),
          leaderEpoch: p.leaderEpoch,
        })),
      })),
    };
  }

  /**
   * Offsets per partition: `high` and `offset` are the high watermark (not the LSO: kafkajs's admin
   * accidentally asks with READ_COMMITTED and so reports the LSO), `low` the log start offset.
   */
  async fetchTopicOffsets(
    topic: string,
  ): Promise<{ partition: number; offset: string; high: string; low: string }[]> {
    const partitions = this.partitionsOf(topicArgument(topic, "admin.fetchTopicOffsets(topic)"));
    return this.retrier.run(() =>
      partitions.map((partition) => {
        const high = this.handler.listOffsets(this.ctx, topic, partition, -1n).offset;
        const low = this.handler.listOffsets(this.ctx, topic, partition, -2n).offset;
        return { partition, offset: String(high), high: String(high), low: String(low) };
      }),
    );
  }

  /** The first offset at or after `timestamp` per partition (the high watermark when none is). */
  async fetchTopicOffsetsByTimestamp(
    topic: string,
    timestamp?: number,
  ): Promise<{ partition: number; offset: string }[]> {
    const where = "admin.fetchTopicOffsetsByTimestamp(topic, timestamp)";
    const partitions = this.partitionsOf(topicArgument(topic, where));
    if (timestamp !== undefined && !(Number.isSafeInteger(timestamp) && timestamp >= 0)) {
      throw new ClusterError(
        "INVALID_REQUEST",
        `${where}: the timestamp is milliseconds since the epoch, a whole number 0 or more, such as ${1_700_000_000_000}; got ${shownValue(timestamp)}`,
      );
    }
    return this.retrier.run(() =>
      partitions.map((partition) => {
        let offset = -1n;
        if (timestamp !== undefined)
          offset = this.handler.listOffsets(this.ctx, topic, partition, BigInt(timestamp)).offset;
        if (offset < 0n) offset = this.handler.listOffsets(this.ctx, topic, partition, -1n).offset;
        return { partition, offset: String(offset) };
      }),
    );
  }

  /** Moves log start offsets up (`offset` "-1": the high watermark), as Kafka's DeleteRecords. */
  async deleteTopicRecords(args: {
    topic: string;
    partitions: { partition: number; offset: string }[];
  }): Promise<void> {
    const where = "admin.deleteTopicRecords(args)";
    const topic = topicArgument((args as { topic?: unknown } | undefined)?.topic, where);
    if (!Array.isArray(args.partitions)) {
      throw new ClusterError(
        "INVALID_REQUEST",
        `${where}: Invalid partitions ${shownValue(args.partitions)}: pass partitions: [{ partition: 0, offset: "42" }] ("-1": the high watermark)`,
      );
    }
    const partitions = args.partitions.map((p) => ({
      partition: partitionArgument(p?.partition, where),
      offset: offsetArgument(p.offset, where, [-1n]),
    }));
    const results = await this.retrier.run(() => {
      const r = this.handler.deleteRecords(this.ctx, topic, partitions);
      const failed = r.find((x) => x.error);
      if (failed?.error) throw failed.error;
      return r;
    });
    void results;
  }

  /** DescribeConfigs in kafkajs's shape; a failed resource throws its error, as kafkajs does. */
  async describeConfigs(args: {
    resources: ResourceConfigQuery[];
    includeSynonyms?: boolean;
  }): Promise<DescribeConfigResponse> {
    checkConfigResources(args, "admin.describeConfigs(args)", "configNames");
    const described = this.handler.describeConfigs(
      this.ctx,
      args.resources.map((r) => ({
        ...configResource(r),
        ...(r.configNames ? { configNames: r.configNames } : {}),
      })),
      args.includeSynonyms ?? false,
    );
    const failed = described.find((d) => d.error);
    if (failed?.error) throw failed.error;
    return { resources: described.map(toDescribeView), throttleTime: 0 };
  }

  /** The legacy AlterConfigs: the entries become the resource's whole dynamic config. */
  async alterConfigs(args: {
    validateOnly?: boolean;
    resources: IResourceConfig[];
  }): Promise<AlterConfigsResponse> {
    checkConfigResources(args, "admin.alterConfigs(args)", "configEntries");
    const results = this.handler.alterConfigs(
      this.ctx,
      args.resources.map((r) => ({ ...configResource(r), entries: r.configEntries })),
      args.validateOnly ?? false,
    );
    const failed = results.find((r) => r.error);
    if (failed?.error) throw failed.error;
    return {
      resources: results.map((r) => ({
        errorCode: 0,
        errorMessage: null,
        resourceName: r.name,
        resourceType: r.type === "topic" ? ConfigResourceTypes.TOPIC : ConfigResourceTypes.BROKER,
      })),
      throttleTime: 0,
    };
  }

  /**
   * IncrementalAlterConfigs (our extra: kafkajs 2.2.4 has none): SET, DELETE, APPEND, SUBTRACT per config,
   * Kafka's semantics; an operation is given by name or by Kafka's id (`AlterConfigOpTypes`).
   */
  async incrementalAlterConfigs(args: {
    validateOnly?: boolean;
    resources: IncrementalResourceConfig[];
  }): Promise<{ resources: { errorCode: number; resourceName: string; resourceType: number }[] }> {
    checkConfigResources(args, "admin.incrementalAlterConfigs(args)", "incremental");
    const results = this.handler.incrementalAlterConfigs(
      this.ctx,
      args.resources.map((r) => ({
        ...configResource(r),
        ops: r.configEntries.map((e) => ({
          name: e.name,
          op: alterConfigOpName(e.operation)!,
          ...(e.value === undefined ? {} : { value: e.value }),
        })),
      })),
      args.validateOnly ?? false,
    );
    const failed = results.find((r) => r.error);
    if (failed?.error) throw failed.error;
    return {
      resources: results.map((r) => ({
        errorCode: 0,
        resourceName: r.name,
        resourceType: r.type === "topic" ? ConfigResourceTypes.TOPIC : ConfigResourceTypes.BROKER,
      })),
    };
  }

  /** Live brokers, the controller id (lowest live broker: the embedded controller is no broker), cluster id. */
  async describeCluster(): Promise<{
    brokers: { nodeId: number; host: string; port: number }[];
    controller: number | null;
    clusterId: string;
  }> {
    const d = this.handler.describeCluster(this.ctx);
    return {
      brokers: d.brokers.map((b) => ({ nodeId: b.nodeId, host: `broker-${b.nodeId}.embedded`, port: 9092 })),
      controller: d.controller < 0 ? null : d.controller,
      clusterId: d.clusterId,
    };
  }

  /** Consumer groups the principal may describe. */
  async listGroups(): Promise<{ groups: { groupId: string; protocolType: string }[] }> {
    return {
      groups: this.handler
        .listGroups(this.ctx)
        .map((g) => ({ groupId: g.groupId, protocolType: "consumer" })),
    };
  }

  /** Group descriptions; a group the principal may not describe throws GROUP_AUTHORIZATION_FAILED. */
  async describeGroups(groupIds: string[]): Promise<{ groups: GroupDescriptionView[] }> {
    checkGroupIds(groupIds, "admin.describeGroups(groupIds)");
    const described = this.handler.describeGroups(this.ctx, groupIds);
    const failed = described.find((g) => g.error);
    if (failed?.error) throw failed.error;
    return {
      groups: described.map((g) => ({
        groupId: g.groupId,
        errorCode: 0,
        members: g.members.map((m) => ({
          memberId: m.memberId,
          clientId: m.clientId,
          clientHost: "/embedded",
          memberMetadata: Buffer.alloc(0),
          memberAssignment: Buffer.alloc(0),
          assignment: m.assignment.map((tp) => ({ ...tp })),
        })),
        protocol: g.state === "Stable" ? "range" : "",
        protocolType: "consumer",
        state: g.state,
      })),
    };
  }

  /**
   * Committed offsets of a group (kafkajs shape, plus `leaderEpoch`): every partition of each topic, "-1"
   * where nothing is committed; with `resolveOffsets`, "-1" becomes the partition's high watermark.
   * Without `topics`, the topics the group has offsets for.
   */
  async fetchOffsets(args: { groupId: string; topics?: string[]; resolveOffsets?: boolean }): Promise<
    {
      topic: string;
      partitions: { partition: number; offset: string; metadata: string | null; leaderEpoch: number }[];
    }[]
  > {
    const groupId = groupIdArgument(args, "admin.fetchOffsets(args)");
    checkFetchOffsetsTopics(args.topics);
    const committed = this.handler.offsetFetch(this.ctx, groupId);
    // As kafkajs sends it (an empty array is null on the wire, Kafka's "every topic"): no topics or none
    // named is every topic the group has offsets of.
    const topics =
      args.topics && args.topics.length > 0 ? args.topics : [...new Set(committed.map((c) => c.topic))];
    return topics.map((topic) => {
      const partitions = this.partitionsOf(topic).map((partition) => {
        const c = committed.find((o) => o.topic === topic && o.partition === partition);
        let offset = c ? String(c.offset) : "-1";
        if (!c && args.resolveOffsets)
          offset = String(this.handler.listOffsets(this.ctx, topic, partition, -1n).offset);
        return { partition, offset, metadata: c ? c.metadata : null, leaderEpoch: c ? c.leaderEpoch : -1 };
      });
      return { topic, partitions };
    });
  }

  /**
   * Sets a group's committed offsets ("-2": earliest, "-1": latest). Refused with NON_EMPTY_GROUP while the
   * group has active members, as Kafka (and kafkajs) do.
   */
  async setOffsets(args: {
    groupId: string;
    topic: string;
    partitions: { partition: number; offset: string }[];
  }): Promise<void> {
    const where = "admin.setOffsets(args)";
    const groupId = groupIdArgument(args, where);
    const topic = topicArgument(args.topic, where);
    checkSetOffsetsPartitions(args.partitions);
    const offsets = args.partitions.map((p) => {
      const partition = partitionArgument(p?.partition, where);
      let offset = offsetArgument(p.offset, where, [-2n, -1n]);
      if (offset === -1n || offset === -2n)
        offset = this.handler.listOffsets(this.ctx, topic, partition, offset).offset;
      return { topic, partition, offset };
    });
    this.handler.alterGroupOffsets(this.ctx, groupId, offsets);
  }

  /** Resets a group's offsets of a topic to the earliest (or, by default, the latest) offsets. */
  async resetOffsets(args: { groupId: string; topic: string; earliest?: boolean }): Promise<void> {
    const where = "admin.resetOffsets(args)";
    const groupId = groupIdArgument(args, where);
    const topic = topicArgument(args.topic, where);
    const at = args.earliest ? "-2" : "-1";
    await this.setOffsets({
      groupId,
      topic,
      partitions: this.partitionsOf(topic).map((partition) => ({ partition, offset: at })),
    });
  }

  /** Deletes Empty groups and their offsets; the first failure is thrown. */
  async deleteGroups(groupIds: string[]): Promise<{ groupId: string; errorCode: number }[]> {
    checkGroupIds(groupIds, "admin.deleteGroups(groupIds)");
    const results = this.handler.deleteGroups(this.ctx, groupIds);
    const failed = results.find((r) => r.error);
    if (failed?.error) throw failed.error;
    return results.map((r) => ({ groupId: r.groupId, errorCode: 0 }));
  }

  /** Creates ACLs (kafkajs's numeric enums); ALTER on the CLUSTER is needed. */
  async createAcls(args: { acl: AclEntry[] }): Promise<boolean> {
    checkCreateAclsArguments(args);
    this.handler.createAcls(this.ctx, args.acl.map(toBinding));
    return true;
  }

  /** Describes ACLs matching a filter, grouped by resource as kafkajs returns them. */
  async describeAcls(filter: AclFilter): Promise<{
    throttleTime: number;
    errorCode: number;
    errorMessage: string | null;
    resources: {
      resourceType: number;
      resourceName: string;
      resourcePatternType: number;
      acls: { principal: string; host: string; operation: number; permissionType: number }[];
    }[];
  }> {
    checkAclFilter(filter, "admin.describeAcls(filter)");
    const bindings = this.handler.describeAcls(this.ctx, toFilter(filter));
    const resources = new Map<
      string,
      {
        resourceType: number;
        resourceName: string;
        resourcePatternType: number;
        acls: { principal: string; host: string; operation: number; permissionType: number }[];
      }
    >();
    for (const b of bindings) {
      const k = `${b.resourceType}\u0000${b.resourceName}\u0000${b.patternType}`;
      let r = resources.get(k);
      if (!r) {
        r = {
          resourceType: AclResourceTypes[b.resourceType],
          resourceName: b.resourceName,
          resourcePatternType: ResourcePatternTypes[b.patternType],
          acls: [],
        };
        resources.set(k, r);
      }
      r.acls.push({
        principal: b.principal,
        host: b.host,
        operation: AclOperationTypes[b.operation],
        permissionType: AclPermissionTypes[b.permissionType],
      });
    }
    return { throttleTime: 0, errorCode: 0, errorMessage: null, resources: [...resources.values()] };
  }

  /** Deletes the ACLs matching each filter; returns what each filter removed. */
  async deleteAcls(args: { filters: AclFilter[] }): Promise<{
    filterResponses: {
      errorCode: number;
      errorMessage: string | null;
      matchingAcls: (AclEntry & { errorCode: number; errorMessage: string | null })[];
    }[];
  }> {
    checkDeleteAclsArguments(args);
    const removed = this.handler.deleteAcls(this.ctx, args.filters.map(toFilter));
    return {
      filterResponses: removed.map((list) => ({
        errorCode: 0,
        errorMessage: null,
        matchingAcls: list.map((b) => ({ ...fromBinding(b), errorCode: 0, errorMessage: null })),
      })),
    };
  }

  /** The cluster's request handler, for a request of this client: none once the cluster is closed. */
  private get handler() {
    this.client.cluster.ensureOpen("send an admin request");
    return this.client.handler;
  }

  private get ctx() {
    return this.client.request;
  }

  private partitionsOf(topic: string): number[] {
    const described = this.handler.metadata(this.ctx, [topic])[0]!;
    if (described.error) throw described.error;
    return described.partitions.map((p) => p.partition);
  }

  private async waitForLeaders(topics: readonly string[], timeoutMs: number): Promise<void> {
    const { cluster } = this.client;
    const deadline = cluster.clock.now() + timeoutMs;
    for (;;) {
      const missing = topics.some((name) =>
        (cluster.controller.image.topic(name)?.partitions ?? []).some(
          (p) => p.leader < 0 || cluster.broker(p.leader)?.replica(name, p.partition)?.isLeader !== true,
        ),
      );
      if (!missing) return;
      if (cluster.clock.now() >= deadline) {
        throw new ClusterError(
          "LEADER_NOT_AVAILABLE",
          `topics [${topics.join(", ")}] have partitions without a running leader after ${timeoutMs} ms`,
        );
      }
      await sleep(this.client.scheduler, 100);
    }
  }
}

/**
 * A topic's refusal, saying why when it gave `numPartitions` or `replicationFactor` as null: kafkajs sends
 * null as 0, which Kafka refuses, and a caller expecting the default would not see where 0 came from.
 */
function nullCountHint(error: ClusterError, topic: ITopicConfig): ClusterError {
  const field = (["numPartitions", "replicationFactor"] as const).find((f) => topic[f] === null);
  if (field === undefined || error.errorName === "TOPIC_ALREADY_EXISTS") return error;
  return new ClusterError(
    error.errorName as KafkaErrorName,
    `${error.message} (topic '${topic.topic}' has ${field}: null, which kafkajs sends as 0: leave ${field} out, or give -1, for the broker default)`,
    { cause: error },
  );
}

const RESOURCE_TYPE_NAMES: Record<number, AclResourceType> = {
  2: "TOPIC",
  3: "GROUP",
  4: "CLUSTER",
  5: "TRANSACTIONAL_ID",
};
const OPERATION_NAMES: Record<number, AclOperation> = {
  2: "ALL",
  3: "READ",
  4: "WRITE",
  5: "CREATE",
  6: "DELETE",
  7: "ALTER",
  8: "DESCRIBE",
  9: "CLUSTER_ACTION",
  10: "DESCRIBE_CONFIGS",
  11: "ALTER_CONFIGS",
  12: "IDEMPOTENT_WRITE",
};
const PATTERN_NAMES: Record<number, AclPatternType> = { 3: "LITERAL", 4: "PREFIXED" };
const PERMISSION_NAMES: Record<number, "ALLOW" | "DENY"> = { 2: "DENY", 3: "ALLOW" };

function named<T>(table: Record<number, T>, value: number, what: string): T {
  const name = table[value];
  if (name === undefined) throw new ClusterError("INVALID_REQUEST", `unsupported ACL ${what} ${value}`);
  return name;
}

function toBinding(a: AclEntry): AclBinding {
  return {
    resourceType: named(RESOURCE_TYPE_NAMES, a.resourceType, "resource type"),
    resourceName: a.resourceName,
    patternType: named(PATTERN_NAMES, a.resourcePatternType, "pattern type"),
    principal: a.principal,
    host: a.host,
    operation: named(OPERATION_NAMES, a.operation, "operation"),
    permissionType: named(PERMISSION_NAMES, a.permissionType, "permission type"),
  };
}

function fromBinding(b: AclBinding): AclEntry {
  return {
    resourceType: AclResourceTypes[b.resourceType],
    resourceName: b.resourceName,
    resourcePatternType: ResourcePatternTypes[b.patternType],
    principal: b.principal,
    host: b.host,
    operation: AclOperationTypes[b.operation],
    permissionType: AclPermissionTypes[b.permissionType],
  };
}

/**
 * kafkajs filter to ours: ANY (1) and null/undefined match anything; MATCH (2) matches the bindings that
 * apply to the named resource (its LITERAL one, the LITERAL `*`, PREFIXED ones whose prefix starts it).
 */
function toFilter(f: AclFilter): AclBindingFilter {
  const out: AclBindingFilter = {};
  if (f.resourceType !== AclResourceTypes.ANY)
    out.resourceType = named(RESOURCE_TYPE_NAMES, f.resourceType, "resource type");
  if (f.resourceName !== undefined && f.resourceName !== null) out.resourceName = f.resourceName;
  if (f.resourcePatternType === ResourcePatternTypes.MATCH) out.patternType = "MATCH";
  else if (f.resourcePatternType !== ResourcePatternTypes.ANY)
    out.patternType = named(PATTERN_NAMES, f.resourcePatternType, "pattern type");
  if (f.principal !== undefined && f.principal !== null) out.principal = f.principal;
  if (f.host !== undefined && f.host !== null) out.host = f.host;
  if (f.operation !== AclOperationTypes.ANY) out.operation = named(OPERATION_NAMES, f.operation, "operation");
  if (f.permissionType !== AclPermissionTypes.ANY)
    out.permissionType = named(PERMISSION_NAMES, f.permissionType, "permission type");
  return out;
}

function configResource(r: { type: number; name: string }): { type: "topic" | "broker"; name: string } {
  if (r.type === ConfigResourceTypes.TOPIC) return { type: "topic", name: r.name };
  if (r.type === ConfigResourceTypes.BROKER) return { type: "broker", name: r.name };
  throw new ClusterError(
    "INVALID_REQUEST",
    `config resource type ${r.type} is not supported (use TOPIC 2 or BROKER 4)`,
  );
}

const SOURCE_CODES: Record<ConfigSourceName, number> = {
  TOPIC_CONFIG: ConfigSource.TOPIC_CONFIG,
  DYNAMIC_BROKER_CONFIG: ConfigSource.DYNAMIC_BROKER_CONFIG,
  DYNAMIC_DEFAULT_BROKER_CONFIG: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
  DEFAULT_CONFIG: ConfigSource.DEFAULT_CONFIG,
};

function toDescribeView(d: ConfigResourceDescription): DescribeConfigResponse["resources"][number] {
  return {
    configEntries: d.entries.map((e) => ({
      configName: e.name,
      configValue: e.value,
      isDefault: e.isDefault,
      configSource: SOURCE_CODES[e.source],
      isSensitive: e.isSensitive,
      readOnly: e.readOnly,
      configSynonyms: e.synonyms.map((s) => ({
        configName: s.name,
        configValue: s.value,
        configSource: SOURCE_CODES[s.source],
      })),
    })),
    errorCode: 0,
    errorMessage: null,
    resourceName: d.name,
    resourceType: d.type === "topic" ? ConfigResourceTypes.TOPIC : ConfigResourceTypes.BROKER,
  };
}
