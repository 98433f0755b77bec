import { KafkaError } from "@cluster-mirror/protocol";
import type {
  AclBinding,
  AclBindingFilter,
  AclOperation,
  AclResourceType,
  AuthorizationRequest,
} from "./acls";
import type { RequestContext } from "./broker";
import type { AlterConfigOp, CreateTopicRequest } from "./controller";
import { ClusterError } from "./errors";
import type { CommittedOffset, GroupDescription, GroupStateName } from "./group-coordinator";
import type { KafkaCluster } from "./kafka-cluster";
import type { MetadataImage, PartitionMetadata } from "./metadata-image";
import { isMirrorReadOnly } from "./mirror-read-only";
import { missingPartition } from "./missing-partition";
import {
  admitOffsets,
  type OffsetRefusal,
  type RefusedOffset,
  refusedOffsetsError,
} from "./offset-commit-refusals";
import { shownValue } from "./shown-value";
import { RESERVED_TOPIC_CONFIGS, reservedTopicConfigProblem, TOPIC_CONFIGS } from "./topic-configs";
import type { TopicPartition } from "./transaction-coordinator";
import { UNCLEAN_LEADER_ELECTION_CONFIG } from "./unclean-election";
import type { Uuid } from "./uuid";

/** The outcome of one topic of a CreateTopics / DeleteTopics / CreatePartitions request. */
export interface TopicResult {
  topic: string;
  topicId?: Uuid;
  /** Set when this topic failed; the other topics of the request are unaffected. */
  error?: ClusterError;
}

/** One topic as Metadata answers it. */
export interface TopicDescription {
  name: string;
  topicId: Uuid;
  partitions: PartitionMetadata[];
  /** Set when the topic was asked for by name and cannot be described (unknown, or not authorized). */
  error?: ClusterError;
}

/** Where a config value comes from (Kafka's ConfigSource names). */
export type ConfigSourceName =
  | "TOPIC_CONFIG"
  | "DYNAMIC_BROKER_CONFIG"
  | "DYNAMIC_DEFAULT_BROKER_CONFIG"
  | "DEFAULT_CONFIG";

/** One config entry as DescribeConfigs answers it. */
export interface ConfigEntryDescription {
  name: string;
  value: string | null;
  isDefault: boolean;
  source: ConfigSourceName;
  readOnly: boolean;
  isSensitive: boolean;
  /** The values this one overrides, most specific first (with `includeSynonyms`). */
  synonyms: { name: string; value: string | null; source: ConfigSourceName }[];
}

/** A config resource: a topic, or a broker by id ("" = the cluster-wide broker defaults). */
export interface ConfigResource {
  type: "topic" | "broker";
  name: string;
}

/** One resource of a DescribeConfigs answer. */
export interface ConfigResourceDescription extends ConfigResource {
  entries: ConfigEntryDescription[];
  error?: ClusterError;
}

/** One resource of an (incremental) AlterConfigs answer. */
export interface ConfigResourceResult extends ConfigResource {
  error?: ClusterError;
}

/** Cluster description (Metadata / DescribeCluster). */
export interface ClusterDescription {
  clusterId: string;
  /** Live brokers. */
  brokers: { nodeId: number; rack: string | null }[];
  /**
   * The embedded controller is not a broker (KRaft, in process); like a KRaft cluster answering Metadata,
   * the lowest live broker id is reported as the "controller" (-1 when none is live).
   */
  controller: number;
}

/** One partition of a DeleteRecords answer. */
export interface DeleteRecordsResult {
  partition: number;
  lowWatermark?: bigint;
  error?: ClusterError;
}

/** One group of a DescribeGroups / DeleteGroups answer. */
export interface GroupResult {
  groupId: string;
  error?: ClusterError;
}

/** A committed offset with its partition. */
export interface PartitionOffset extends TopicPartition, CommittedOffset {}

const ANONYMOUS = "User:ANONYMOUS";

/**
 * What an offset a transaction sent (TxnOffsetCommit) carries until the transaction commits: the id of its
 * topic then, and the position of its write among the group's offset writes
 * (`GroupCoordinator.validateTxnOffsetCommit`).
 */
export interface PendingTxnOffset {
  topicId: Uuid;
  position: number;
}

/**
 * The server side of every request that is not a partition's produce/fetch: admin requests (topics,
 * configs, ACLs, groups, records) and the coordinator requests of producers and consumers (InitProducerId,
 * AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit, JoinGroup, Heartbeat, LeaveGroup, OffsetCommit,
 * OffsetFetch).
 * Each call authorizes first, as Kafka's `KafkaApis` does, with the operations Kafka requires, and then calls
 * the controller or a coordinator. Failures are `ClusterError`s with Kafka's names and codes.
 */
export class AdminHandler {
  constructor(private readonly cluster: KafkaCluster) {}

  // ---- topics -------------------------------------------------------------------------------------------

  /**
   * CreateTopics: CREATE on the CLUSTER allows every topic, else CREATE on each TOPIC is needed. Each topic
   * succeeds or fails on its own (TOPIC_ALREADY_EXISTS, INVALID_*, TOPIC_AUTHORIZATION_FAILED).
   * `validateOnly` runs every check of a creation without creating anything.
   */
  createTopics(
    ctx: RequestContext,
    topics: readonly CreateTopicRequest[],
    validateOnly = false,
  ): TopicResult[] {
    const clusterCreate = this.allowed(ctx, "CREATE", "CLUSTER", "kafka-cluster");
    return topics.map((request) =>
      this.perTopic(request.name, () => {
        if (!clusterCreate) this.authorize(ctx, "CREATE", "TOPIC", request.name);
        refuseReservedConfigs(Object.keys(request.configs ?? {}));
        refuseCountsWithAssignment(request);
        // The controller's checks (the name, the counts, the configs, the assignment) first, as Kafka orders
        // them; validateOnly runs every one of them and creates nothing (Kafka's ReplicationControlManager
        // checks a validation as a creation, then drops its records).
        if (validateOnly || request.replicaAssignment !== undefined) {
          this.cluster.controller.createTopic(request, { validateOnly: true });
        }
        if (request.replicaAssignment !== undefined) {
          refuseFencedOnlyReplicas(this.cluster.controller.image, request.replicaAssignment, 0);
        }
        if (validateOnly) return {};
        return { topicId: this.cluster.controller.createTopic(request) };
      }),
    );
  }

  /** DeleteTopics: DELETE on each TOPIC. */
  deleteTopics(ctx: RequestContext, names: readonly string[]): TopicResult[] {
    return names.map((name) =>
      this.perTopic(name, () => {
        this.authorize(ctx, "DELETE", "TOPIC", name);
        this.cluster.controller.deleteTopic(name);
        return {};
      }),
    );
  }

  /**
   * CreatePartitions: ALTER on each TOPIC; `count` is the new total. `validateOnly` runs every check and adds
   * nothing (Kafka's ReplicationControlManager.createPartitions).
   */
  createPartitions(
    ctx: RequestContext,
    requests: readonly { topic: string; count: number; assignments?: readonly (readonly number[])[] }[],
    validateOnly = false,
  ): TopicResult[] {
    return requests.map((r) =>
      this.perTopic(r.topic, () => {
        this.authorize(ctx, "ALTER", "TOPIC", r.topic);
        // A mirror topic's partitions are its source's (KIP-1279): a client's added ones would never be
        // mirrored, and its failover would wait for them forever. The mirror's own metadata sync raises
        // them (through the controller, not this request).
        const topic = this.cluster.controller.image.topic(r.topic);
        const mirrorName = topic?.configs.get("mirror.name");
        if (topic?.partitions.some((p) => isMirrorReadOnly(p, mirrorName))) {
          throw new ClusterError(
            "READ_ONLY_TOPIC",
            `${r.topic} is a mirror topic (mirror '${mirrorName!.replace(/\.(paused|removed)$/, "")}') and read-only: raise its partitions on the source, and the mirror's metadata sync adds them here`,
          );
        }
        if (r.assignments !== undefined) {
          // The controller's checks of the count and assignments first, as Kafka orders them.
          this.cluster.controller.createPartitions(r.topic, r.count, undefined, {
            validateOnly: true,
            assignments: r.assignments,
          });
          refuseFencedOnlyReplicas(this.cluster.controller.image, r.assignments, topic!.partitions.length);
        }
        this.cluster.controller.createPartitions(r.topic, r.count, undefined, {
          validateOnly,
          ...(r.assignments === undefined ? {} : { assignments: r.assignments }),
        });
        return {};
      }),
    );
  }

  /**
   * Metadata: every topic the principal may DESCRIBE (unlisted ones are silently left out, as Kafka does),
   * or the named topics, each with an error when unknown or not authorized.
   */
  metadata(ctx: RequestContext, topics?: readonly string[]): TopicDescription[] {
    const image = this.cluster.controller.image;
    if (topics === undefined) {
      return [...image.topicsById.values()]
        .filter((t) => this.allowed(ctx, "DESCRIBE", "TOPIC", t.name))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((t) => ({ name: t.name, topicId: t.topicId, partitions: t.partitions.map(copyPartition) }));
    }
    return topics.map((name) => {
      if (!this.allowed(ctx, "DESCRIBE", "TOPIC", name)) {
        return { name, topicId: "", partitions: [], error: this.denied(ctx, "DESCRIBE", "TOPIC", name) };
      }
      const t = image.topic(name);
      if (!t) {
        return {
          name,
          topicId: "",
          partitions: [],
          error: new ClusterError("UNKNOWN_TOPIC_OR_PARTITION", `topic '${name}' does not exist`),
        };
      }
      return { name, topicId: t.topicId, partitions: t.partitions.map(copyPartition) };
    });
  }

  /**
   * ListOffsets on a partition's leader (DESCRIBE on the TOPIC): -2 earliest, -1 latest (the high
   * watermark for read_uncommitted, the LSO for read_committed), else the first offset at or after the
   * timestamp.
   */
  listOffsets(
    ctx: RequestContext,
    topic: string,
    partition: number,
    timestamp: bigint,
    isolationLevel: "read_uncommitted" | "read_committed" = "read_uncommitted",
  ): { offset: bigint; timestamp: bigint; leaderEpoch: number } {
    this.authorize(ctx, "DESCRIBE", "TOPIC", topic);
    return wrap(() =>
      this.cluster.leaderFor(topic, partition).listOffsets(topic, partition, timestamp, isolationLevel),
    );
  }

  /**
   * DeleteRecords (DELETE on the TOPIC): moves each partition's log start offset up to `offset` (-1: the
   * high watermark) on its leader (`Broker.deleteRecords`); followers follow on their next fetch.
   */
  deleteRecords(
    ctx: RequestContext,
    topic: string,
    partitions: readonly { partition: number; offset: bigint }[],
  ): DeleteRecordsResult[] {
    this.authorize(ctx, "DELETE", "TOPIC", topic);
    return partitions.map(({ partition, offset }) => {
      try {
        const leader = this.cluster.leaderFor(topic, partition);
        const target = offset < 0n ? (leader.replica(topic, partition)?.log.highWatermark ?? 0n) : offset;
        const lowWatermark = wrap(() => leader.deleteRecords(topic, partition, target, ctx));
        return { partition, lowWatermark };
      } catch (error) {
        return { partition, error: toClusterError(error) };
      }
    });
  }

  // ---- configs ------------------------------------------------------------------------------------------

  /** DescribeConfigs: DESCRIBE_CONFIGS on the TOPIC, or on the CLUSTER for brokers. */
  describeConfigs(
    ctx: RequestContext,
    resources: readonly (ConfigResource & { configNames?: readonly string[] })[],
    includeSynonyms = false,
  ): ConfigResourceDescription[] {
    const image = this.cluster.controller.image;
    return resources.map((r) => {
      try {
        this.authorizeConfig(ctx, "DESCRIBE_CONFIGS", r);
        let entries: ConfigEntryDescription[];
        if (r.type === "topic") {
          const t = image.topic(r.name);
          if (!t) throw new ClusterError("UNKNOWN_TOPIC_OR_PARTITION", `topic '${r.name}' does not exist`);
          // The cluster-wide broker default a topic config falls back to, where the controller reads one.
          const clusterDefaults = image.brokerConfigs.get("");
          entries = Object.entries(TOPIC_CONFIGS).map(([name, def]) => {
            const dynamic = t.configs.get(name);
            const inherited =
              name === UNCLEAN_LEADER_ELECTION_CONFIG ? clusterDefaults?.get(name) : undefined;
            const synonyms: ConfigEntryDescription["synonyms"] = [];
            if (includeSynonyms && dynamic !== undefined)
              synonyms.push({ name, value: dynamic, source: "TOPIC_CONFIG" });
            if (includeSynonyms && inherited !== undefined)
              synonyms.push({ name, value: inherited, source: "DYNAMIC_DEFAULT_BROKER_CONFIG" });
            if (includeSynonyms) synonyms.push({ name, value: def.defaultValue, source: "DEFAULT_CONFIG" });
            return {
              name,
              value: dynamic ?? inherited ?? def.defaultValue,
              isDefault: dynamic === undefined && inherited === undefined,
              source:
                dynamic !== undefined
                  ? "TOPIC_CONFIG"
                  : inherited !== undefined
                    ? "DYNAMIC_DEFAULT_BROKER_CONFIG"
                    : "DEFAULT_CONFIG",
              readOnly: false,
              isSensitive: false,
              synonyms,
            };
          });
        } else {
          const own =
            r.name === "" ? new Map<string, string>() : (image.brokerConfigs.get(r.name) ?? new Map());
          const defaults = image.brokerConfigs.get("") ?? new Map<string, string>();
          const names = [...new Set([...own.keys(), ...defaults.keys()])].sort();
          entries = names.map((name) => {
            const mine = own.get(name);
            const source: ConfigSourceName =
              mine !== undefined ? "DYNAMIC_BROKER_CONFIG" : "DYNAMIC_DEFAULT_BROKER_CONFIG";
            const synonyms: ConfigEntryDescription["synonyms"] = [];
            if (includeSynonyms && mine !== undefined)
              synonyms.push({ name, value: mine, source: "DYNAMIC_BROKER_CONFIG" });
            if (includeSynonyms && defaults.has(name))
              synonyms.push({ name, value: defaults.get(name)!, source: "DYNAMIC_DEFAULT_BROKER_CONFIG" });
            return {
              name,
              value: mine ?? defaults.get(name) ?? null,
              isDefault: false,
              source,
              readOnly: false,
              isSensitive: false,
              synonyms,
            };
          });
        }
        const wanted = r.configNames && r.configNames.length > 0 ? new Set(r.configNames) : undefined;
        return {
          type: r.type,
          name: r.name,
          entries: wanted ? entries.filter((e) => wanted.has(e.name)) : entries,
        };
      } catch (error) {
        return { type: r.type, name: r.name, entries: [], error: toClusterError(error) };
      }
    });
  }

  /**
   * IncrementalAlterConfigs (ALTER_CONFIGS on the TOPIC, or on the CLUSTER for brokers): SET, DELETE,
   * APPEND and SUBTRACT per config, all or nothing per resource.
   */
  incrementalAlterConfigs(
    ctx: RequestContext,
    resources: readonly (ConfigResource & { ops: readonly AlterConfigOp[] })[],
    validateOnly = false,
  ): ConfigResourceResult[] {
    return resources.map((r) => {
      try {
        this.authorizeConfig(ctx, "ALTER_CONFIGS", r);
        if (r.type === "topic" && !this.cluster.controller.image.topic(r.name)) {
          throw new ClusterError("UNKNOWN_TOPIC_OR_PARTITION", `topic '${r.name}' does not exist`);
        }
        if (r.type === "topic") refuseReservedConfigs(r.ops.map((o) => o.name));
        // validateOnly checks the values as a change would (Kafka's AlterConfigPolicy), writing nothing.
        this.cluster.controller.incrementalAlterConfigs({ type: r.type, name: r.name }, r.ops, {
          validateOnly,
        });
        return { type: r.type, name: r.name };
      } catch (error) {
        return { type: r.type, name: r.name, error: toClusterError(error) };
      }
    });
  }

  /**
   * The legacy AlterConfigs: the given entries become the resource's whole dynamic config; every dynamic
   * config not listed goes back to its default (Kafka's non-incremental semantics).
   */
  alterConfigs(
    ctx: RequestContext,
    resources: readonly (ConfigResource & { entries: readonly { name: string; value: string }[] })[],
    validateOnly = false,
  ): ConfigResourceResult[] {
    const image = this.cluster.controller.image;
    return this.incrementalAlterConfigs(
      ctx,
      resources.map((r) => {
        const current =
          r.type === "topic"
            ? (image.topic(r.name)?.configs ?? new Map<string, string>())
            : (image.brokerConfigs.get(r.name) ?? new Map<string, string>());
        const given = new Set(r.entries.map((e) => e.name));
        const ops: AlterConfigOp[] = [
          ...r.entries.map((e) => ({ name: e.name, op: "SET" as const, value: e.value })),
          ...[...current.keys()]
            // A reserved config is the mirror's, not the client's: replacing the whole config keeps it.
            .filter((n) => !given.has(n) && !(r.type === "topic" && RESERVED_TOPIC_CONFIGS.includes(n)))
            .map((name) => ({ name, op: "DELETE" as const })),
        ];
        return { type: r.type, name: r.name, ops };
      }),
      validateOnly,
    );
  }

  // ---- cluster and ACLs ---------------------------------------------------------------------------------

  /** Live brokers, the cluster id and a controller id (see `ClusterDescription.controller`). */
  describeCluster(_ctx: RequestContext): ClusterDescription {
    const image = this.cluster.controller.image;
    const live = image.liveBrokers();
    return {
      clusterId: this.cluster.clusterId,
      brokers: live.map((id) => ({ nodeId: id, rack: image.brokers.get(id)?.rack ?? null })),
      controller: live[0] ?? -1,
    };
  }

  /** CreateAcls: ALTER on the CLUSTER. */
  createAcls(ctx: RequestContext, bindings: readonly AclBinding[]): void {
    this.authorize(ctx, "ALTER", "CLUSTER", "kafka-cluster");
    this.cluster.authorizer.createAcls(bindings);
  }

  /** DescribeAcls: DESCRIBE on the CLUSTER. */
  describeAcls(ctx: RequestContext, filter: AclBindingFilter): AclBinding[] {
    this.authorize(ctx, "DESCRIBE", "CLUSTER", "kafka-cluster");
    return this.cluster.authorizer.describeAcls(filter);
  }

  /** DeleteAcls: ALTER on the CLUSTER; returns the removed bindings per filter. */
  deleteAcls(ctx: RequestContext, filters: readonly AclBindingFilter[]): AclBinding[][] {
    this.authorize(ctx, "ALTER", "CLUSTER", "kafka-cluster");
    return filters.map((f) => this.cluster.authorizer.deleteAcls([f]));
  }

  // ---- groups (admin) -----------------------------------------------------------------------------------

  /** ListGroups: every group with DESCRIBE on the GROUP (or all, with DESCRIBE on the CLUSTER). */
  listGroups(ctx: RequestContext): { groupId: string; state: GroupStateName }[] {
    const all = this.allowed(ctx, "DESCRIBE", "CLUSTER", "kafka-cluster");
    return this.cluster.groups
      .listGroups()
      .filter((g) => all || this.allowed(ctx, "DESCRIBE", "GROUP", g.groupId));
  }

  /** DescribeGroups: DESCRIBE on each GROUP. An unknown group is described as Dead. */
  describeGroups(ctx: RequestContext, groupIds: readonly string[]): (GroupDescription & GroupResult)[] {
    return groupIds.map((groupId) => {
      if (!this.allowed(ctx, "DESCRIBE", "GROUP", groupId)) {
        return {
          groupId,
          state: "Dead" as const,
          generationId: -1,
          members: [],
          error: this.denied(ctx, "DESCRIBE", "GROUP", groupId),
        };
      }
      return this.cluster.groups.describeGroup(groupId);
    });
  }

  /** DeleteGroups: DELETE on each GROUP; refused (NON_EMPTY_GROUP) while a group has members. */
  deleteGroups(ctx: RequestContext, groupIds: readonly string[]): GroupResult[] {
    return groupIds.map((groupId) => {
      try {
        this.authorize(ctx, "DELETE", "GROUP", groupId);
        this.cluster.groups.deleteGroup(groupId);
        return { groupId };
      } catch (error) {
        return { groupId, error: toClusterError(error) };
      }
    });
  }

  /**
   * OffsetFetch: DESCRIBE on the GROUP; partitions of topics the principal may not DESCRIBE are left out.
   * Offsets come with the leader epoch committed beside them.
   */
  offsetFetch(
    ctx: RequestContext,
    groupId: string,
    partitions?: readonly TopicPartition[],
  ): PartitionOffset[] {
    this.authorize(ctx, "DESCRIBE", "GROUP", groupId);
    const offsets = this.cluster.groups.fetchOffsets(groupId, partitions);
    const result: PartitionOffset[] = [];
    for (const [k, v] of offsets) {
      const cut = k.lastIndexOf(":");
      const topic = k.slice(0, cut);
      if (!this.allowed(ctx, "DESCRIBE", "TOPIC", topic)) continue;
      result.push({ topic, partition: Number(k.slice(cut + 1)), ...v });
    }
    return result.sort((a, b) =>
      a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition,
    );
  }

  /**
   * AlterConsumerGroupOffsets (an OffsetCommit without membership, as Kafka's admin client sends it):
   * without READ on the GROUP the whole request is refused; then each offset is refused or admitted as
   * OffsetCommit's are (see `offsetCommit`: TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION), and
   * the admitted ones are set, refused with NON_EMPTY_GROUP while the group has active members, as Kafka
   * does.
   */
  alterGroupOffsets(
    ctx: RequestContext,
    groupId: string,
    offsets: readonly (TopicPartition & { offset: bigint; leaderEpoch?: number })[],
  ): void {
    this.authorize(ctx, "READ", "GROUP", groupId);
    this.commitAdmitted(ctx, groupId, offsets, "Set", (admitted) =>
      this.cluster.groups.alterOffsets(groupId, admitted),
    );
  }

  // ---- consumer group membership and commits ------------------------------------------------------------

  /** JoinGroup: READ on the GROUP. Assignment is computed by the coordinator (server side). */
  joinGroup(
    ctx: RequestContext,
    request: { groupId: string; memberId?: string; topics: readonly string[]; sessionTimeoutMs?: number },
  ): { memberId: string; generationId: number; assignment: TopicPartition[] } {
    this.authorize(ctx, "READ", "GROUP", request.groupId);
    return this.cluster.groups.joinGroup({ ...request, clientId: ctx.clientId });
  }

  /** Heartbeat: READ on the GROUP. */
  heartbeat(
    ctx: RequestContext,
    request: { groupId: string; memberId: string },
  ): { generationId: number; assignment: TopicPartition[] } {
    this.authorize(ctx, "READ", "GROUP", request.groupId);
    return this.cluster.groups.heartbeat(request);
  }

  /** LeaveGroup: READ on the GROUP. */
  leaveGroup(ctx: RequestContext, request: { groupId: string; memberId: string }): void {
    this.authorize(ctx, "READ", "GROUP", request.groupId);
    this.cluster.groups.leaveGroup(request);
  }

  /**
   * OffsetCommit (KafkaApis.handleOffsetCommitRequest): without READ on the GROUP the whole request is
   * refused; then an offset of a topic the principal may not READ (TOPIC_AUTHORIZATION_FAILED) or of a
   * partition the cluster does not have (UNKNOWN_TOPIC_OR_PARTITION) is refused and not stored, and the
   * others go to the group coordinator (members must be of the current generation; none at all when every
   * offset is refused). Throws as kafkajs does on the response: the first refused offset's error (see
   * `admitOffsets`), else the coordinator's.
   */
  offsetCommit(
    ctx: RequestContext,
    request: {
      groupId: string;
      memberId?: string;
      generationId?: number;
      offsets: readonly (TopicPartition & { offset: bigint; leaderEpoch?: number; metadata?: string })[];
    },
  ): void {
    this.authorize(ctx, "READ", "GROUP", request.groupId);
    this.commitAdmitted(ctx, request.groupId, request.offsets, "Commit", (admitted) =>
      this.cluster.groups.commitOffsets({ ...request, offsets: admitted }),
    );
  }

  /**
   * The per-offset half of an OffsetCommit (KafkaApis.handleOffsetCommitRequest), once READ on the group
   * was granted: the offsets `admitOffsets` admits go to the group coordinator (`commit`; not called when
   * every offset is refused), then the first refused offset's error is thrown (kafkajs throws the first
   * partition error of the response), else the coordinator's.
   */
  private commitAdmitted<T extends TopicPartition>(
    ctx: RequestContext,
    groupId: string,
    offsets: readonly T[],
    verb: "Commit" | "Set",
    commit: (admitted: T[]) => void,
  ): void {
    const { admitted, refused } = admitOffsets(offsets, this.offsetRefusal(ctx));
    let coordinatorError: unknown;
    if (admitted.length > 0) {
      try {
        commit(admitted);
      } catch (error) {
        coordinatorError = error;
      }
    }
    if (refused.length > 0) {
      const done = verb === "Set" ? "set" : "committed";
      const rest =
        admitted.length === 0
          ? `nothing was ${done}`
          : coordinatorError === undefined
            ? `the other ${admitted.length} offset(s) were ${done}`
            : `the others were refused: ${(coordinatorError as Error).message}`;
      throw refusedOffsetsError(refused, { groupId, rest, verb });
    }
    if (coordinatorError !== undefined) throw coordinatorError;
  }

  // ---- producer ids and transactions --------------------------------------------------------------------

  /**
   * InitProducerId. Transactional: WRITE on the TRANSACTIONAL_ID (bumps the epoch, fencing the previous
   * producer). Idempotent only: no check (Kafka 3.0+ allows it to any principal that may write a topic;
   * the produce itself is checked).
   */
  initProducerId(
    ctx: RequestContext,
    request: { transactionalId?: string; transactionTimeoutMs?: number },
  ): { producerId: bigint; producerEpoch: number } {
    if (request.transactionalId !== undefined)
      this.authorize(ctx, "WRITE", "TRANSACTIONAL_ID", request.transactionalId);
    return this.cluster.transactions.initProducerId(request);
  }

  /** AddPartitionsToTxn: WRITE on the TRANSACTIONAL_ID and on each TOPIC. */
  addPartitionsToTxn(
    ctx: RequestContext,
    request: {
      transactionalId: string;
      producerId: bigint;
      producerEpoch: number;
      partitions: readonly TopicPartition[];
    },
  ): void {
    this.authorize(ctx, "WRITE", "TRANSACTIONAL_ID", request.transactionalId);
    for (const topic of new Set(request.partitions.map((p) => p.topic)))
      this.authorize(ctx, "WRITE", "TOPIC", topic);
    for (const tp of request.partitions) {
      if (!this.cluster.controller.image.partition(tp.topic, tp.partition)) {
        throw new ClusterError("UNKNOWN_TOPIC_OR_PARTITION", `${tp.topic}-${tp.partition} does not exist`);
      }
    }
    this.cluster.transactions.addPartitionsToTxn(request);
  }

  /**
   * AddOffsetsToTxn (KafkaApis.handleAddOffsetsToTxnRequest): WRITE on the TRANSACTIONAL_ID, READ on the
   * GROUP; then the transaction coordinator's checks (see `TransactionCoordinator.addOffsetsToTxn`).
   */
  addOffsetsToTxn(
    ctx: RequestContext,
    request: { transactionalId: string; producerId: bigint; producerEpoch: number; groupId: string },
  ): void {
    this.authorize(ctx, "WRITE", "TRANSACTIONAL_ID", request.transactionalId);
    this.authorize(ctx, "READ", "GROUP", request.groupId);
    const { transactionalId, producerId, producerEpoch } = request;
    this.cluster.transactions.addOffsetsToTxn({ transactionalId, producerId, producerEpoch });
  }

  /** EndTxn: WRITE on the TRANSACTIONAL_ID; settles once the markers were written once (see TransactionCoordinator.endTxn). */
  endTxn(
    ctx: RequestContext,
    request: { transactionalId: string; producerId: bigint; producerEpoch: number; commit: boolean },
  ): Promise<void> {
    this.authorize(ctx, "WRITE", "TRANSACTIONAL_ID", request.transactionalId);
    return this.cluster.transactions.endTxn(request);
  }

  /**
   * TxnOffsetCommit (KafkaApis.handleTxnOffsetCommitRequest), when a transaction sends offsets: without
   * WRITE on the TRANSACTIONAL_ID or READ on the GROUP the whole request is refused; then each offset is
   * refused or admitted as OffsetCommit's are (see `admitOffsets`), and the group coordinator checks the
   * admitted ones' member information (`GroupCoordinator.validateTxnOffsetCommit`): if it refuses them, none
   * is admitted and its error is thrown, unless an offset was refused (the response lists those first:
   * kafkajs throws the first). Kafka writes the admitted ones to the group as pending transactional
   * offsets; here the caller keeps them until the transaction commits (`completeTxnOffsetCommit`), each
   * with the id its topic has now and the position of this write. Returns both lists: kafkajs throws the
   * first refusal, after retrying some.
   */
  txnOffsetCommit<T extends TopicPartition>(
    ctx: RequestContext,
    request: {
      transactionalId: string;
      groupId: string;
      memberId?: string;
      generationId?: number;
      offsets: readonly T[];
    },
  ): { admitted: (T & PendingTxnOffset)[]; refused: RefusedOffset<T>[] } {
    this.authorize(ctx, "WRITE", "TRANSACTIONAL_ID", request.transactionalId);
    this.authorize(ctx, "READ", "GROUP", request.groupId);
    const { admitted, refused } = admitOffsets(request.offsets, this.offsetRefusal(ctx));
    if (admitted.length === 0) return { admitted: [], refused };
    let position: number;
    try {
      position = this.cluster.groups.validateTxnOffsetCommit(request);
    } catch (error) {
      if (refused.length === 0) throw error;
      return { admitted: [], refused };
    }
    const image = this.cluster.controller.image;
    // Admitted offsets are of partitions the cluster has, so their topic has an id.
    const pending = admitted.map((o) => ({ ...o, topicId: image.topic(o.topic)!.topicId, position }));
    return { admitted: pending, refused };
  }

  /**
   * Stores the offsets a committed transaction sent (`txnOffsetCommit` admitted them): Kafka's
   * OffsetMetadataManager.replayEndTransactionMarker once the COMMIT marker reached the group's log.
   * Nothing is checked again (not the ACLs, not the group's generation): the offsets were when they were
   * sent. An offset whose topic was deleted since it was sent (`topicId` is no longer the id of a topic of
   * that name) is dropped, as Kafka's OffsetMetadataManager.onPartitionsDeleted drops the pending
   * transactional offsets of deleted partitions: stored, it would be an offset of the deleted topic for a
   * topic created again under its name (`GroupCoordinator.onTopicDeleted` clears the committed ones). One
   * whose partition's offset was written after it was sent keeps that write (see
   * `GroupCoordinator.completeTxnOffsets`).
   */
  completeTxnOffsetCommit(request: {
    groupId: string;
    offsets: readonly (TopicPartition & { offset: bigint } & PendingTxnOffset)[];
  }): void {
    const image = this.cluster.controller.image;
    const offsets = request.offsets
      .filter((o) => image.topic(o.topic)?.topicId === o.topicId)
      .map(({ topic, partition, offset, position }) => ({ topic, partition, offset, position }));
    if (offsets.length > 0) this.cluster.groups.completeTxnOffsets(request.groupId, offsets);
  }

  // ---- helpers ------------------------------------------------------------------------------------------

  /** True if the principal may perform the operation. */
  allowed(
    ctx: RequestContext,
    operation: AclOperation,
    resourceType: AclResourceType,
    resourceName: string,
  ): boolean {
    return this.cluster.authorizer.authorize(request(ctx, operation, resourceType, resourceName));
  }

  /** Throws the resource type's *_AUTHORIZATION_FAILED error when the principal may not. */
  authorize(
    ctx: RequestContext,
    operation: AclOperation,
    resourceType: AclResourceType,
    resourceName: string,
  ): void {
    this.cluster.authorizer.check(request(ctx, operation, resourceType, resourceName));
  }

  private denied(
    ctx: RequestContext,
    operation: AclOperation,
    resourceType: AclResourceType,
    resourceName: string,
  ): ClusterError {
    try {
      this.authorize(ctx, operation, resourceType, resourceName);
    } catch (error) {
      return toClusterError(error);
    }
    return new ClusterError("INVALID_REQUEST", "authorization unexpectedly succeeded");
  }

  /**
   * Why an offset of a commit is refused before it reaches the group coordinator (KafkaApis's order): no
   * READ on its topic, else a partition the cluster does not have; undefined when it is admitted.
   */
  private offsetRefusal(
    ctx: RequestContext,
  ): (topic: string, partition: number) => OffsetRefusal | undefined {
    return (topic, partition) => {
      if (!this.allowed(ctx, "READ", "TOPIC", topic)) {
        const { message } = this.denied(ctx, "READ", "TOPIC", topic);
        return { errorName: "TOPIC_AUTHORIZATION_FAILED", reason: message };
      }
      const missing = missingPartition(this.cluster.controller.image, topic, partition);
      return missing === undefined ? undefined : { errorName: "UNKNOWN_TOPIC_OR_PARTITION", reason: missing };
    };
  }

  private authorizeConfig(ctx: RequestContext, operation: AclOperation, r: ConfigResource): void {
    if (r.type === "topic") this.authorize(ctx, operation, "TOPIC", r.name);
    else this.authorize(ctx, operation, "CLUSTER", "kafka-cluster");
  }

  private perTopic(topic: string, fn: () => { topicId?: Uuid }): TopicResult {
    try {
      return { topic, ...fn() };
    } catch (error) {
      return { topic, error: toClusterError(error) };
    }
  }
}

function request(
  ctx: RequestContext,
  operation: AclOperation,
  resourceType: AclResourceType,
  resourceName: string,
): AuthorizationRequest {
  return { principal: ctx.principal ?? ANONYMOUS, host: ctx.host, operation, resourceType, resourceName };
}

function copyPartition(p: PartitionMetadata): PartitionMetadata {
  return { ...p, replicas: [...p.replicas], isr: [...p.isr] };
}

/** Names of log-layer errors that have a `ClusterError` counterpart. */
const LOG_ERROR_NAMES = new Set([
  "OFFSET_OUT_OF_RANGE",
  "INVALID_PRODUCER_EPOCH",
  "INVALID_TXN_STATE",
  "KAFKA_STORAGE_ERROR",
]);

/**
 * Any failure as a `ClusterError`: cluster errors as they are, the log's typed errors under their Kafka
 * name, anything else as INVALID_REQUEST with the original as `cause`.
 */
export function toClusterError(error: unknown): ClusterError {
  if (error instanceof ClusterError) return error;
  if (error instanceof KafkaError && LOG_ERROR_NAMES.has(error.errorName)) {
    return new ClusterError(error.errorName as "OFFSET_OUT_OF_RANGE", error.message, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ClusterError("INVALID_REQUEST", message, { cause: error });
}

function wrap<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw toClusterError(error);
  }
}

/** INVALID_CONFIG for the first config in `names` that clients may not change (RESERVED_TOPIC_CONFIGS). */
function refuseReservedConfigs(names: readonly string[]): void {
  for (const name of names) {
    const problem = reservedTopicConfigProblem(name);
    if (problem !== undefined) throw new ClusterError("INVALID_CONFIG", problem);
  }
}

/**
 * Kafka's ReplicationControlManager (createTopic, createPartitions): a manually assigned partition's ISR is
 * its active replicas; with none (every replica fenced) it would be born offline, so the request is refused.
 * Checked on the requests only: the controller's own callers (the mirror, set-ups) place partitions freely.
 */
function refuseFencedOnlyReplicas(
  image: MetadataImage,
  assignment: readonly (readonly number[])[],
  firstPartition: number,
): void {
  assignment.forEach((replicas, i) => {
    if (replicas.some((b) => image.brokers.get(b)?.fenced === false)) return;
    throw new ClusterError(
      "INVALID_REPLICA_ASSIGNMENT",
      `All brokers specified in the manual partition assignment for partition ${firstPartition + i} are fenced or in controlled shutdown: brokers [${replicas}] are fenced; name at least one live broker (live: ${image.liveBrokers().join(", ") || "none"})`,
    );
  });
}

/**
 * Kafka's ReplicationControlManager.createTopic: a manual partition assignment leaves the partition count and
 * replication factor to it (-1 in the request). Both given, the count was silently ignored: `numPartitions:
 * 6` with one partition assigned made a topic of one partition.
 */
function refuseCountsWithAssignment(request: CreateTopicRequest): void {
  if (request.replicaAssignment === undefined) return;
  for (const [field, value] of [
    ["replication factor", request.replicationFactor],
    ["numPartitions", request.numPartitions],
  ] as const) {
    if (value !== undefined && value !== -1) {
      throw new ClusterError(
        "INVALID_REQUEST",
        `A manual partition assignment was specified, but ${field} was not set to -1: topic '${request.name}' gets its partitions and replicas from replicaAssignment, so leave out numPartitions and replicationFactor (got ${shownValue(value)})`,
      );
    }
  }
}
