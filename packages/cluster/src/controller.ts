import { ClusterClosedError, ClusterError } from "./errors";
import { MetadataImage, type PartitionMetadata, type TopicMetadata } from "./metadata-image";
import type {
  AclRecord,
  MetadataLogEntry,
  MetadataRecord,
  MirrorReadOnlyRecord,
  PartitionChangeRecord,
  RemoveAclRecord,
} from "./metadata-records";
import { asksForMirroring, becomesMirror, MIRROR_NAME_CONFIG } from "./mirror-read-only";
import { checkAddedPartitionAssignments } from "./partition-assignments";
import { settlesAny } from "./pending-truncation";
import type { Random } from "./random";
import { shownValue } from "./shown-value";
import {
  canonicalTopicConfigValue,
  topicConfigDef,
  validateBrokerConfig,
  validateTopicConfig,
} from "./topic-configs";
import { validateTopicName } from "./topic-name";
import { UNCLEAN_LEADER_ELECTION_CONFIG, uncleanElectionEnabled } from "./unclean-election";
import { isUuid, randomUuid, type Uuid, ZERO_UUID } from "./uuid";

/** A request to create one topic. */
export interface CreateTopicRequest {
  name: string;
  /** Defaults to 1 (ignored when `replicaAssignment` is given). */
  numPartitions?: number;
  /** Defaults to min(3, live brokers) (ignored when `replicaAssignment` is given). */
  replicationFactor?: number;
  /** Replicas per partition, first one preferred leader. */
  replicaAssignment?: number[][];
  /** Create with this id (mirror topics keep the source's id); fails if another topic has it. */
  topicId?: Uuid;
  configs?: Record<string, string>;
}

/** Kafka's `validateOnly` of CreateTopics and CreatePartitions: every check, no change. */
export interface ValidateOnlyOption {
  validateOnly?: boolean;
}

/** What CreatePartitions takes beside the count: `validateOnly`, and the added partitions' replicas. */
export interface CreatePartitionsOptions extends ValidateOnlyOption {
  /** One replica list (broker ids, preferred leader first) per added partition; none: placed round-robin. */
  assignments?: readonly (readonly number[])[];
}

/** One change of an incremental alter configs request (Kafka's AlterConfigOp). */
export interface AlterConfigOp {
  name: string;
  op: "SET" | "DELETE" | "APPEND" | "SUBTRACT";
  value?: string;
}

/** A partition whose leader epoch must reach at least `minLeaderEpoch` (KIP-1279's BumpLeaderEpochs). */
export interface BumpLeaderEpochRequest {
  topic: string;
  partition: number;
  minLeaderEpoch: number;
}

/** What a batched bump did to one requested partition: its new leader epoch, or why it was not bumped. */
export type BumpLeaderEpochResult =
  | { topic: string; partition: number; leaderEpoch: number; error?: undefined }
  | { topic: string; partition: number; leaderEpoch?: undefined; error: ClusterError };

/** A bump request once validated: the partition's key, the epoch it gets, or the error. */
interface PlannedBump extends BumpLeaderEpochRequest {
  key?: string;
  leaderEpoch?: number;
  error?: ClusterError;
}

/** One partition replica's partition, by topic id (the broker is implied). */
export interface ReplicaRef {
  topicId: Uuid;
  partition: number;
}

/** Listener of the metadata log, called once per record, in offset order. */
export type MetadataListener = (entry: MetadataLogEntry) => void;

/** Stores one record batch of the metadata log durably, all or nothing; throws if it could not. */
export type MetadataJournal = (batch: readonly MetadataLogEntry[]) => void;

/** Options of the controller. */
export interface ControllerOptions {
  /** Picks topic ids and the first broker of replica placement. */
  random: Random;
  /**
   * Called when a listener throws: a metadata listener (with the record it was given; the record is still
   * applied and the others still hear it) or an availability listener (`onAvailable`; no record, and the
   * others are still called).
   */
  onListenerError?: (error: unknown, entry: MetadataLogEntry | undefined) => void;
  /** The brokers' default min.insync.replicas (a topic's own config wins); Kafka's default 1 if unset. */
  minInsyncReplicas?: number;
}

/**
 * The cluster's controller (KRaft's QuorumController, in one process): validates requests, turns each into
 * metadata records, appends them to the metadata log in order, applies them to its image and feeds them to
 * every subscriber. Brokers learn everything about topics, leaders and configs from this feed.
 */
export class Controller {
  /** The controller's current view; brokers build the same one from the feed. */
  readonly image = new MetadataImage();
  private readonly log: MetadataLogEntry[] = [];
  private readonly listeners = new Set<MetadataListener>();
  private readonly random: Random;
  private readonly onListenerError: (error: unknown, entry: MetadataLogEntry | undefined) => void;
  private readonly minInsyncReplicas: number | undefined;
  /** Where record batches are made durable before they take effect (see `setJournal`). */
  private journal: MetadataJournal | undefined;
  private available = true;
  /** Called each time the controller becomes available again (see `onAvailable`). */
  private readonly availableListeners = new Set<() => void>();
  /** The cluster id once its cluster closed (see `close`). */
  private closedCluster: string | undefined;
  /**
   * Broker lifecycle events heard while unavailable, per broker in arrival order of their last event:
   * whether it stopped (crash or shutdown) during the window, and whether it is registered (running) now.
   */
  private readonly pendingBrokers = new Map<
    number,
    { stopped: boolean; rack: string | null | undefined; recoveredWithLoss?: readonly ReplicaRef[] }
  >();

  constructor(options: ControllerOptions) {
    this.random = options.random;
    this.minInsyncReplicas = options.minInsyncReplicas;
    this.onListenerError = options.onListenerError ?? (() => {});
  }

  /** False during a controller failover window (see `setAvailable`). */
  get isAvailable(): boolean {
    return this.available;
  }

  /**
   * Models a controller failover (the KRaft quorum has no active controller for a while). While
   * unavailable, every mutating request (createTopic, deleteTopic, createPartitions, incrementalAlterConfigs,
   * bumpLeaderEpochs, alterPartition, putMirror, deleteMirror, allocateProducerIds, electPreferredLeaders)
   * throws NOT_CONTROLLER (retriable, code 41); the metadata feed and image stay readable. Broker
   * registrations and fencings (broker start, shutdown, crash) are queued: when the controller becomes
   * available again, the new active controller fences every broker that stopped during the window (it
   * missed heartbeats; a broker that came back re-registers with a new incarnation) and then registers or
   * unfences the brokers that are running, in the order they were last heard of.
   */
  setAvailable(available: boolean): void {
    if (this.available === available) return;
    this.available = available;
    if (!available) return;
    const pending = [...this.pendingBrokers];
    this.pendingBrokers.clear();
    for (const [brokerId, p] of pending) {
      if (p.stopped && this.image.brokers.has(brokerId)) this.fenceBroker(brokerId);
      if (p.rack !== undefined) this.registerBroker(brokerId, p.rack, p.recoveredWithLoss);
    }
    for (const listener of [...this.availableListeners]) this.deliver(listener, undefined);
  }

  /**
   * Calls `listener` each time a controller failover window ends (`setAvailable(true)` after
   * `setAvailable(false)`): a new active controller answers again, the brokers it missed already fenced
   * and registered. Not while it stays available. Returns the function that unsubscribes.
   */
  onAvailable(listener: () => void): () => void {
    this.availableListeners.add(listener);
    return () => {
      this.availableListeners.delete(listener);
    };
  }

  /**
   * The cluster closed: every mutating request throws ClusterClosedError from now on (the metadata feed and
   * image stay readable). Called by `KafkaCluster.close()` after its brokers stopped.
   */
  close(clusterId: string): void {
    this.closedCluster = clusterId;
  }

  /** Every metadata record so far, in order. */
  metadataLog(): readonly MetadataLogEntry[] {
    return this.log;
  }

  /**
   * Subscribes to the metadata feed: first the records from `fromOffset` on, then every new one, in order.
   * Returns the function that unsubscribes.
   */
  subscribe(listener: MetadataListener, fromOffset = 0): () => void {
    for (const entry of this.log.slice(fromOffset)) this.deliver(() => listener(entry), entry);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Makes `journal` the metadata log's durable store: every record batch the controller decides from now
   * on is handed to it, whole, before any of it is applied or published (KRaft's atomic batches). A
   * journal that throws fails the request and nothing of the batch takes effect. Undefined: none.
   */
  setJournal(journal: MetadataJournal | undefined): void {
    this.journal = journal;
  }

  /**
   * Replays records this controller decided before a restart (from a persisted metadata log), in order,
   * into an empty log: its log and image end up as they were, and subscribers see them as usual. Nothing
   * is validated or decided again. Call before any broker starts.
   */
  replay(records: readonly MetadataRecord[]): void {
    if (this.log.length !== 0) {
      throw new ClusterError(
        "INVALID_REQUEST",
        `cannot replay a metadata log into a controller that already has ${this.log.length} records; replay before starting brokers`,
      );
    }
    this.append(records);
  }

  /**
   * Registers a broker and unfences it. Registering a known broker again just unfences it.
   * `recoveredWithLoss`: the replicas whose log recovery on this start dropped data (a corrupt or torn
   * segment). Such a replica may lack acknowledged records, so, as Kafka does with a replica that comes
   * back from an unclean shutdown (KIP-966), it leaves the ISR and gives up leadership to an in-sync replica
   * with the full log, before the broker is unfenced; it rejoins the ISR once it has fetched back up to the
   * leader. Only when it is the last ISR member does it stay (no replica is known to have more).
   */
  registerBroker(
    brokerId: number,
    rack: string | null = null,
    recoveredWithLoss: readonly ReplicaRef[] = [],
  ): void {
    if (!Number.isInteger(brokerId) || brokerId < 0) {
      throw new ClusterError("INVALID_REQUEST", `broker id must be a non-negative integer, got ${brokerId}`);
    }
    if (!this.available) {
      const p = this.pendingBrokers.get(brokerId);
      this.pendingBrokers.delete(brokerId);
      this.pendingBrokers.set(brokerId, { stopped: p?.stopped ?? false, rack, recoveredWithLoss });
      return;
    }
    if (!this.image.brokers.has(brokerId)) this.append([{ type: "RegisterBroker", brokerId, rack }]);
    this.demoteLossyReplicas(brokerId, recoveredWithLoss);
    this.unfenceBroker(brokerId);
  }

  /**
   * Fences a broker (it crashed or shut down): it leaves every ISR, and each partition it led elects a new
   * leader from the remaining ISR with a bumped leader epoch, or goes offline (leader -1) when none is left
   * and unclean election is off.
   */
  fenceBroker(brokerId: number): void {
    if (!this.available) {
      this.pendingBrokers.delete(brokerId);
      this.pendingBrokers.set(brokerId, { stopped: true, rack: undefined });
      return;
    }
    const broker = this.requireBroker(brokerId);
    if (broker.fenced) return;
    const records: MetadataRecord[] = [{ type: "FenceBroker", brokerId }];
    const live = new Set(this.image.liveBrokers().filter((id) => id !== brokerId));
    for (const topic of this.image.topicsById.values()) {
      for (const p of topic.partitions) {
        if (p.leader !== brokerId && !p.isr.includes(brokerId)) continue;
        records.push(this.electAfterLoss(topic, p, brokerId, live));
      }
    }
    this.append(records);
  }

  /**
   * Unfences a broker; offline partitions whose ISR holds it elect it leader, and so do offline partitions
   * with an empty ISR (the last member lost data on recovery) that have it as an eligible leader replica
   * (KIP-966). Elsewhere it stays eligible until it is back in the ISR (caught up). An offline partition of a
   * topic with `unclean.leader.election.enable=true` that no ISR or eligible member can lead elects its first
   * replica that is running (this broker or an unfenced one), out of sync or not, as Kafka's
   * `ReplicationControlManager.handleBrokerUnfenced` does over every leaderless partition
   * (`PartitionChangeBuilder`'s unclean election); with the option off it waits for an in-sync replica.
   * The option is the topic's, else the cluster-wide broker default (see `uncleanElectionEnabled`).
   */
  unfenceBroker(brokerId: number): void {
    this.checkAvailable("unfence a broker");
    const broker = this.requireBroker(brokerId);
    if (!broker.fenced) return;
    const records: MetadataRecord[] = [{ type: "UnfenceBroker", brokerId }];
    const live = new Set(this.image.liveBrokers());
    for (const topic of this.image.topicsById.values()) {
      for (const p of topic.partitions) {
        if (p.leader !== -1) continue;
        // Only the eligible replica fenced last: one fenced earlier may miss what was committed after it
        // left (it stays eligible until it rejoins, whatever the ISR kept), so the partition waits for it.
        const eligible = p.elr !== undefined && p.elr.length > 0 && p.elr[p.elr.length - 1] === brokerId;
        if (p.isr.includes(brokerId)) {
          records.push(change(topic.topicId, p, { leader: brokerId, leaderEpoch: p.leaderEpoch + 1 }));
        } else if (p.isr.length === 0 && eligible) {
          records.push(
            change(topic.topicId, p, { leader: brokerId, isr: [brokerId], leaderEpoch: p.leaderEpoch + 1 }),
          );
        } else if (this.uncleanElectionEnabled(topic)) {
          const unclean = uncleanLeaderChange(topic, p, (b) => b === brokerId || live.has(b));
          if (unclean) records.push(unclean);
        }
      }
    }
    this.append(records);
  }

  /** Creates a topic; returns its id. */
  createTopic(request: CreateTopicRequest, options: ValidateOnlyOption = {}): Uuid {
    this.checkAvailable("create a topic");
    validateTopicName(request.name);
    if (this.image.topic(request.name)) {
      throw new ClusterError("TOPIC_ALREADY_EXISTS", `topic '${request.name}' already exists`);
    }
    const collides = this.image.collidingTopic(request.name);
    if (collides !== undefined) {
      throw new ClusterError(
        "INVALID_TOPIC_EXCEPTION",
        `topic '${request.name}' collides with existing topic '${collides}': Kafka reads '.' and '_' as the same in metric names, so topics may not differ only by them; pick another name`,
      );
    }
    // A validation draws no id (that would move the controller's random stream): it answers the given one,
    // or the zero UUID.
    const topicId = request.topicId ?? (options.validateOnly ? ZERO_UUID : this.newTopicId());
    if ((!isUuid(topicId) || topicId === ZERO_UUID) && request.topicId !== undefined) {
      throw new ClusterError("INVALID_REQUEST", `topic id '${topicId}' is not a valid non-zero UUID`);
    }
    const holder = this.image.topicsById.get(topicId);
    if (holder) {
      throw new ClusterError(
        "INCONSISTENT_TOPIC_ID",
        `topic id ${topicId} is already used by topic '${holder.name}'; delete that topic or use another id`,
      );
    }
    const configs = Object.entries(request.configs ?? {}).map(
      ([name, value]) => [name, checkConfig(name, value)] as const,
    );
    if (options.validateOnly && request.replicaAssignment === undefined) {
      // The checks of `assign`, without drawing the random start a real assignment takes.
      this.checkPlacement(request.numPartitions ?? 1, request.replicationFactor);
      return topicId;
    }
    const assignment =
      request.replicaAssignment ?? this.assign(request.numPartitions ?? 1, request.replicationFactor);
    this.checkAssignment(assignment);
    if (options.validateOnly) return topicId;
    const records: MetadataRecord[] = [{ type: "Topic", name: request.name, topicId }];
    for (const [name, value] of configs) {
      records.push({ type: "Config", resourceType: "topic", resourceName: request.name, name, value });
    }
    for (const [partition, replicas] of assignment.entries()) {
      records.push(this.newPartition(topicId, partition, replicas));
    }
    this.append(records);
    return topicId;
  }

  /** Deletes a topic by name. */
  deleteTopic(name: string): void {
    this.checkAvailable("delete a topic");
    const topic = this.requireTopic(name);
    this.append([{ type: "RemoveTopic", topicId: topic.topicId }]);
  }

  /** Raises a topic's partition count to `totalCount` (Kafka's CreatePartitions). */
  createPartitions(
    name: string,
    totalCount: number,
    replicationFactor?: number,
    options: CreatePartitionsOptions = {},
  ): void {
    this.checkAvailable("create partitions");
    const topic = this.requireTopic(name);
    const current = topic.partitions.length;
    if (!Number.isInteger(totalCount)) {
      throw new ClusterError(
        "INVALID_PARTITIONS",
        `the new partition count of topic '${name}' must be a whole number (the new total, larger than its ${current}), got ${shownValue(totalCount)}`,
      );
    }
    // Kafka's ReplicationControlManager.createPartitions: partitions are only ever added.
    if (totalCount === current) {
      throw new ClusterError(
        "INVALID_PARTITIONS",
        `Topic already has ${current} partition(s): topic '${name}' keeps them; give a larger count (the new total) to add partitions`,
      );
    }
    if (totalCount < current) {
      throw new ClusterError(
        "INVALID_PARTITIONS",
        `The topic ${name} currently has ${current} partition(s); ${totalCount} would not be an increase. Kafka never removes partitions: give a count larger than ${current} (the new total)`,
      );
    }
    const rf = replicationFactor ?? topic.partitions[0]?.replicas.length ?? 1;
    // Kafka's ReplicationControlManager.createPartitions: the added partitions' replicas as the request
    // assigns them, else placed as a new topic's are.
    const { assignments } = options;
    if (assignments !== undefined) {
      checkAddedPartitionAssignments(name, current, totalCount - current, rf, assignments);
    } else if (options.validateOnly) {
      this.checkPlacement(totalCount - current, rf);
      return;
    }
    const assignment = assignments?.map((replicas) => [...replicas]) ?? this.assign(totalCount - current, rf);
    this.checkAssignment(assignment, current);
    if (options.validateOnly) return;
    const records = assignment.map((replicas, i) => this.newPartition(topic.topicId, current + i, replicas));
    // A failed-over topic (`.removed`, every partition writable): no engine will ever clear a new partition's
    // flag, and without one its `mirror.name` alone would keep it read-only for good.
    const mirrorName = topic.configs.get(MIRROR_NAME_CONFIG);
    if (mirrorName?.endsWith(".removed") && topic.partitions.every((p) => p.mirrorReadOnly === false)) {
      for (let i = 0; i < assignment.length; i++)
        records.push(mirrorReadOnly(topic.topicId, current + i, false));
    }
    this.append(records);
  }

  /** Applies config changes to a topic or broker (all or nothing). */
  incrementalAlterConfigs(
    resource: { type: "topic" | "broker"; name: string },
    ops: readonly AlterConfigOp[],
    options: ValidateOnlyOption = {},
  ): void {
    this.checkAvailable("alter configs");
    const current =
      resource.type === "topic"
        ? this.requireTopic(resource.name).configs
        : (this.image.brokerConfigs.get(resource.name) ?? new Map<string, string>());
    if (
      resource.type === "broker" &&
      resource.name !== "" &&
      !this.image.brokers.has(Number(resource.name))
    ) {
      throw new ClusterError("INVALID_REQUEST", `broker '${resource.name}' is not registered`);
    }
    const next = new Map(current);
    for (const op of ops) {
      const value = op.value ?? "";
      if (op.op !== "DELETE" && op.value === undefined) {
        throw new ClusterError("INVALID_REQUEST", `config op ${op.op} on '${op.name}' needs a value`);
      }
      if (op.op === "DELETE") next.delete(op.name);
      else if (op.op === "SET") next.set(op.name, value);
      else {
        const list = (next.get(op.name) ?? defaultFor(resource.type, op.name) ?? "")
          .split(",")
          .map((v) => v.trim())
          .filter((v) => v);
        const items = value
          .split(",")
          .map((v) => v.trim())
          .filter((v) => v);
        const merged =
          op.op === "APPEND"
            ? [...list, ...items.filter((v) => !list.includes(v))]
            : list.filter((v) => !items.includes(v));
        next.set(op.name, merged.join(","));
      }
      if (op.op !== "DELETE") {
        if (resource.type === "topic") next.set(op.name, checkConfig(op.name, next.get(op.name)!));
        else checkBrokerConfig(resource.name, op.name, next.get(op.name)!);
      }
    }
    // Every value checked as a real change would check it; nothing written.
    if (options.validateOnly) return;
    const records: MetadataRecord[] = [];
    for (const name of new Set([...current.keys(), ...next.keys()])) {
      const before = current.get(name);
      const after = next.get(name);
      if (before === after) continue;
      records.push({
        type: "Config",
        resourceType: resource.type,
        resourceName: resource.name,
        name,
        value: after ?? null,
      });
    }
    if (resource.type === "topic") {
      const topic = this.requireTopic(resource.name);
      const before = current.get(MIRROR_NAME_CONFIG);
      const after = next.get(MIRROR_NAME_CONFIG);
      if (becomesMirror(before, after)) {
        // In the same batch as the config: no produce lands between "a mirror again" and read-only.
        for (const p of topic.partitions) {
          if (p.mirrorReadOnly === false)
            records.push(mirrorReadOnly(topic.topicId, p.partition, true, true));
        }
      }
    }
    if (records.some((r) => r.type === "Config" && r.name === UNCLEAN_LEADER_ELECTION_CONFIG)) {
      records.push(...this.uncleanElectionsAfter(resource, next));
    }
    this.append(records);
  }

  /**
   * The unclean elections once `resource`'s configs are `configs`: a running replica, out of sync or not,
   * leads every leaderless partition whose topic then allows unclean elections (see
   * `uncleanElectionEnabled`). Kafka's controller elects so for leaderless partitions
   * (`ReplicationControlManager.maybeTriggerUncleanLeaderElectionForLeaderlessPartitions`), so turning the
   * option on (on the topic or as the cluster-wide broker default) brings an offline partition back without
   * waiting for a broker to come back. Kafka runs that check periodically (every
   * `unclean.leader.election.interval.ms`, 5 minutes by default); this controller, which has no clock, runs it
   * with the change, in its batch.
   */
  private uncleanElectionsAfter(
    resource: { type: "topic" | "broker"; name: string },
    configs: ReadonlyMap<string, string>,
  ): MetadataRecord[] {
    const clusterDefaults =
      resource.type === "broker" && resource.name === "" ? configs : this.image.brokerConfigs.get("");
    const live = new Set(this.image.liveBrokers());
    const records: MetadataRecord[] = [];
    for (const topic of this.image.topicsById.values()) {
      const own = resource.type === "topic" && resource.name === topic.name ? configs : topic.configs;
      if (!uncleanElectionEnabled(own, clusterDefaults)) continue;
      for (const p of topic.partitions) {
        if (p.leader !== -1) continue;
        const unclean = uncleanLeaderChange(topic, p, (b) => live.has(b));
        if (unclean) records.push(unclean);
      }
    }
    return records;
  }

  /** Whether `topic` allows unclean elections: its own config, else the cluster-wide broker default. */
  private uncleanElectionEnabled(topic: TopicMetadata): boolean {
    return uncleanElectionEnabled(topic.configs, this.image.brokerConfigs.get(""));
  }

  /**
   * Sets or clears KIP-1279's read-only flag of one mirror partition in the metadata log (the mirror engine:
   * set from PREPARING on, cleared at STOPPED). Every replica derives ReadOnlyTopic from it, so it survives
   * restarts and leader changes. Setting the value it already has writes nothing, except that a set takes
   * over a flag a `mirror.name` change set (a re-add starting: PREPARING). A clear leaves such a flag alone
   * while `mirror.name` still asks for mirroring: the engine's STOPPED step runs again when a coordinator
   * loads a STOPPED partition, and a re-add that set `mirror.name` meanwhile, its START still to come, must
   * keep the topic read-only (produces landing now are local writes its truncation would drop unchecked).
   * Once that re-add is removed again, the engine clears it (ordered with its commands: see
   * `CoordinatorShard.clearReadOnlyIfStopped`).
   */
  setMirrorReadOnly(topic: string, partition: number, readOnly: boolean): void {
    const t = this.requireTopic(topic);
    const p = requirePartition(t, partition);
    if (p.mirrorReadOnlyByName && !readOnly && asksForMirroring(t.configs.get(MIRROR_NAME_CONFIG))) return;
    if (p.mirrorReadOnly === readOnly && !(readOnly && p.mirrorReadOnlyByName)) return;
    this.checkAvailable(`${readOnly ? "set" : "clear"} the read-only flag of ${topic}-${partition}`);
    this.append([mirrorReadOnly(t.topicId, partition, readOnly)]);
  }

  /**
   * The leader of `topic-partition` is about to truncate its log for a mirror (KIP-1279): records that every
   * other replica owes the same truncation, before it next fetches or leads (`ReplicaTruncationRecord`), and
   * that the log was rewritten from there (`PartitionMetadata.logRewrites`).
   * Refused with FENCED_LEADER_EPOCH when `leader` at `leaderEpoch` no longer leads.
   */
  recordReplicaTruncation(
    topic: string,
    partition: number,
    request: {
      leader: number;
      leaderEpoch: number;
      truncationOffset: bigint;
      full: boolean;
      previousLogEndOffset: bigint;
    },
  ): void {
    this.checkAvailable(`record the truncation of ${topic}-${partition}`);
    const t = this.requireTopic(topic);
    const p = requirePartition(t, partition);
    this.checkLeader(topic, p, request);
    // Recorded with no other replica too: mirrors downstream of this cluster learn of the cut from it.
    // The leader owes it too: its own cut may fail after this record (a full disk), and a leader that
    // then dies must not come back holding the batches the others dropped (the source's replace them at
    // the same offsets and epochs). It reports at once once its cut is made and stored.
    this.append([
      {
        type: "ReplicaTruncation",
        topicId: t.topicId,
        partition,
        replicas: [...p.replicas],
        truncationOffset: request.truncationOffset,
        full: request.full,
        previousLogEndOffset: request.previousLogEndOffset,
      },
    ]);
  }

  /** A replica applied the truncation record `truncationId` it owed (see `recordReplicaTruncation`). */
  completeReplicaTruncation(topic: string, partition: number, replica: number, truncationId: number): void {
    const t = this.requireTopic(topic);
    const p = requirePartition(t, partition);
    if (!settlesAny(p.pendingTruncations?.get(replica), truncationId)) return;
    this.checkAvailable(`record that broker ${replica} truncated ${topic}-${partition}`);
    this.append([{ type: "ReplicaTruncationDone", topicId: t.topicId, partition, replica, truncationId }]);
  }

  /**
   * Raises each partition's leader epoch to at least `minLeaderEpoch` (and by at least one), keeping the same
   * leader: the leader fences producers and followers of older epochs. Returns the new epochs, in request
   * order. All or nothing: the first partition that cannot be bumped throws and nothing is written (see
   * `bumpLeaderEpochsBatch` for per-partition outcomes).
   */
  bumpLeaderEpochs(requests: readonly BumpLeaderEpochRequest[]): number[] {
    this.checkAvailable("bump leader epochs");
    const { results, records } = this.planBumps(requests);
    const failed = results.find((r) => r.error !== undefined);
    if (failed?.error) throw failed.error;
    this.append(records);
    return results.map((r) => r.leaderEpoch!);
  }

  /**
   * KIP-1279's BumpLeaderEpochs for many partitions at once (a failover of thousands of mirror partitions):
   * every partition that can be bumped gets one PartitionChange record, all of them appended as one record
   * set, so brokers and the metadata log see a single batch instead of one request per partition. A partition
   * named more than once is bumped once, to the largest minimum, and every request for it gets that epoch.
   * One partition that cannot be bumped (unknown, or without a leader) does not stop the others: its result
   * carries the error. While the controller fails over, every result is NOT_CONTROLLER (retriable) and
   * nothing is written. Results are in request order.
   */
  bumpLeaderEpochsBatch(requests: readonly BumpLeaderEpochRequest[]): BumpLeaderEpochResult[] {
    if (!this.available) {
      return requests.map((r) => ({
        topic: r.topic,
        partition: r.partition,
        error: new ClusterError(
          "NOT_CONTROLLER",
          `cannot bump the leader epoch of ${r.topic}-${r.partition}: the controller is failing over (no active controller); retry after a new one is elected`,
        ),
      }));
    }
    const { results, records } = this.planBumps(requests);
    this.append(records);
    return results.map(({ topic, partition, leaderEpoch, error }) =>
      error ? { topic, partition, error } : { topic, partition, leaderEpoch: leaderEpoch! },
    );
  }

  /** Validates bump requests and builds one record per distinct partition (the largest minimum wins). */
  private planBumps(requests: readonly BumpLeaderEpochRequest[]): {
    results: PlannedBump[];
    records: PartitionChangeRecord[];
  } {
    const byPartition = new Map<string, { topicId: Uuid; p: PartitionMetadata; leaderEpoch: number }>();
    const planned = requests.map((r): PlannedBump => {
      const topic = this.image.topic(r.topic);
      const p = topic?.partitions[r.partition];
      if (!topic || !p) {
        const error = topic
          ? `topic '${r.topic}' has no partition ${r.partition} (it has ${topic.partitions.length})`
          : `topic '${r.topic}' does not exist`;
        return { ...r, error: new ClusterError("UNKNOWN_TOPIC_OR_PARTITION", error) };
      }
      if (p.leader === -1) {
        const error = `${r.topic}-${r.partition} has no leader; bring a replica in its ISR back, then bump again`;
        return { ...r, error: new ClusterError("LEADER_NOT_AVAILABLE", error) };
      }
      const k = `${topic.topicId}:${r.partition}`;
      const bump = byPartition.get(k);
      const leaderEpoch = Math.max(p.leaderEpoch + 1, r.minLeaderEpoch);
      if (!bump) byPartition.set(k, { topicId: topic.topicId, p, leaderEpoch });
      else if (leaderEpoch > bump.leaderEpoch) bump.leaderEpoch = leaderEpoch;
      return { ...r, key: k };
    });
    const results = planned.map((r) =>
      r.key === undefined ? r : { ...r, leaderEpoch: byPartition.get(r.key)!.leaderEpoch },
    );
    const records = [...byPartition.values()].map((b) =>
      change(b.topicId, b.p, { leaderEpoch: b.leaderEpoch }),
    );
    return { results, records };
  }

  /**
   * The leader's request to change its ISR (Kafka's AlterPartition). Refused with FENCED_LEADER_EPOCH when
   * the leader's epoch is stale, so a deposed leader cannot shrink or expand the ISR.
   */
  alterPartition(
    topic: string,
    partition: number,
    request: { leader: number; leaderEpoch: number; isr: number[] },
  ): void {
    this.checkAvailable("alter a partition's ISR");
    const t = this.requireTopic(topic);
    const p = requirePartition(t, partition);
    this.checkLeader(topic, p, request);
    const isr = [...new Set(request.isr)];
    if (!isr.includes(p.leader) || isr.some((b) => !p.replicas.includes(b))) {
      throw new ClusterError(
        "INVALID_REQUEST",
        `${topic}-${partition}: ISR [${isr}] must contain the leader ${p.leader} and only replicas [${p.replicas}]`,
      );
    }
    const fenced = isr.filter((b) => b !== p.leader && this.image.brokers.get(b)?.fenced !== false);
    if (fenced.length > 0) {
      throw new ClusterError(
        "INELIGIBLE_REPLICA",
        `${topic}-${partition}: brokers [${fenced}] are fenced or unknown and cannot join the ISR`,
      );
    }
    if (sameSet(isr, p.isr)) return;
    const minIsr = this.effectiveMinIsr(t, p);
    if (minIsr <= 1) {
      this.append([change(t.topicId, p, { isr })]);
      return;
    }
    // KIP-966: a replica that leaves while the ISR falls under min.insync.replicas holds everything up to
    // the high watermark, which stops moving with it: it is eligible. While the ISR meets min.insync.replicas
    // the high watermark moves on, and no replica out of it is.
    const removed = p.isr.filter((b) => !isr.includes(b));
    const elr =
      isr.length >= minIsr ? [] : [...(p.elr ?? []).filter((b) => !removed.includes(b)), ...removed];
    this.append([change(t.topicId, p, { isr, elr })]);
  }

  /**
   * A partition's min.insync.replicas as its leader enforces it on acks=all appends (see
   * {@link effectiveMinIsr}); undefined for a partition that does not exist.
   */
  minInsyncReplicasOf(topic: string, partition: number): number | undefined {
    const t = this.image.topic(topic);
    const p = t?.partitions[partition];
    return t === undefined || p === undefined ? undefined : this.effectiveMinIsr(t, p);
  }

  /**
   * The topic's min.insync.replicas (its own config, else the brokers' default, else 1), at most its
   * replication factor (Kafka's `effectiveMinIsr`).
   */
  private effectiveMinIsr(topic: TopicMetadata, p: PartitionMetadata): number {
    const own = topic.configs.get("min.insync.replicas");
    const value = own !== undefined ? Number(own) : (this.minInsyncReplicas ?? 1);
    return Math.min(value, p.replicas.length);
  }

  /**
   * Creates a cluster mirror or replaces its definition (KIP-1279's CreateClusterMirror / altering the
   * CLUSTER_MIRROR config resource). Validation of the definition is the mirror engine's; the controller only
   * keeps it in the metadata log so every broker sees it in order.
   */
  putMirror(name: string, configs: Record<string, string>): void {
    this.checkAvailable("create or alter a mirror");
    this.append([{ type: "Mirror", name, configs: { ...configs } }]);
  }

  /**
   * Appends ACL changes (the Authorizer's CreateAcls / DeleteAcls, already validated there) to the metadata
   * log, so they are replayed after a restart and every subscriber sees them in order.
   */
  appendAclRecords(records: readonly (AclRecord | RemoveAclRecord)[]): void {
    this.checkAvailable("change ACLs");
    this.append(records);
  }

  /** Deletes a cluster mirror's definition. */
  deleteMirror(name: string): void {
    this.checkAvailable("delete a mirror");
    if (!this.image.mirrors.has(name)) {
      throw new ClusterError("INVALID_REQUEST", `mirror '${name}' does not exist`);
    }
    this.append([{ type: "RemoveMirror", name }]);
  }

  /**
   * Hands out a block of `size` producer ids that will never be handed out again (KRaft's
   * AllocateProducerIds); returns the first id of the block.
   */
  allocateProducerIds(size = 1000): bigint {
    this.checkAvailable("allocate producer ids");
    if (!Number.isInteger(size) || size < 1)
      throw new ClusterError("INVALID_REQUEST", `block size must be >= 1, got ${size}`);
    const first = this.image.nextProducerId;
    this.append([{ type: "ProducerIds", nextProducerId: first + BigInt(size) }]);
    return first;
  }

  /** Makes the first live in-sync replica of each partition its leader (preferred leader election). */
  electPreferredLeaders(): void {
    this.checkAvailable("elect leaders");
    const records: MetadataRecord[] = [];
    const live = new Set(this.image.liveBrokers());
    for (const topic of this.image.topicsById.values()) {
      for (const p of topic.partitions) {
        const preferred = p.replicas[0];
        if (preferred === undefined || preferred === p.leader) continue;
        if (!live.has(preferred) || !p.isr.includes(preferred)) continue;
        records.push(change(topic.topicId, p, { leader: preferred, leaderEpoch: p.leaderEpoch + 1 }));
      }
    }
    this.append(records);
  }

  /**
   * Takes replicas that lost data on recovery out of their ISR and their eligible leader replicas, electing
   * an in-sync leader with the full log. A last ISR member that lost data does not lead while an eligible
   * leader replica (fenced out of the ISR, so it may hold every committed record) can come back, as KIP-966
   * has it: one that is live leads; else the partition stays offline, its ISR empty, until one registers.
   */
  private demoteLossyReplicas(brokerId: number, replicas: readonly ReplicaRef[]): void {
    const records: MetadataRecord[] = [];
    for (const r of replicas) {
      const topic = this.image.topicsById.get(r.topicId);
      const p = topic?.partitions[r.partition];
      if (!topic || !p) continue;
      const elr = (p.elr ?? []).filter((b) => b !== brokerId);
      if (!p.isr.includes(brokerId)) {
        if (elr.length === (p.elr ?? []).length) continue;
        // Offline with nobody eligible left: it leads after all (no replica is known to hold more).
        if (p.leader === -1 && p.isr.length === 0 && elr.length === 0) {
          records.push(
            change(topic.topicId, p, {
              leader: brokerId,
              isr: [brokerId],
              elr,
              leaderEpoch: p.leaderEpoch + 1,
            }),
          );
        } else if (p.leader === -1 && p.isr.length === 0) {
          // It was the one the partition waited for: the eligible replica fenced before it leads if live.
          const next = elr[elr.length - 1]!;
          const live = this.image.liveBrokers().includes(next);
          records.push(
            change(
              topic.topicId,
              p,
              live ? { leader: next, isr: [next], elr, leaderEpoch: p.leaderEpoch + 1 } : { elr },
            ),
          );
        } else records.push(change(topic.topicId, p, { elr }));
        continue;
      }
      const isr = p.isr.filter((b) => b !== brokerId);
      if (isr.length === 0) {
        // The last ISR member: with no eligible replica, nothing is known to hold more, so it stays.
        if (elr.length === 0) continue;
        // The eligible replica fenced last left the ISR last: it holds everything committed before it left,
        // a superset of what those fenced earlier hold (the list is in fencing order). While it is down the
        // partition waits for it: one fenced earlier may miss what was committed after it left.
        const last = elr[elr.length - 1]!;
        const leader = this.image.liveBrokers().includes(last) ? last : undefined;
        records.push(
          change(topic.topicId, p, {
            leader: leader ?? -1,
            isr: leader === undefined ? [] : [leader],
            elr,
            leaderEpoch: p.leaderEpoch + 1,
          }),
        );
        continue;
      }
      if (p.leader !== brokerId && p.leader !== -1) {
        records.push(change(topic.topicId, p, { isr }));
        continue;
      }
      const live = new Set(this.image.liveBrokers());
      const leader =
        p.replicas.find((b) => isr.includes(b) && live.has(b)) ?? p.replicas.find((b) => isr.includes(b));
      records.push(change(topic.topicId, p, { leader, isr, leaderEpoch: p.leaderEpoch + 1 }));
    }
    this.append(records);
  }

  private electAfterLoss(
    topic: TopicMetadata,
    p: PartitionMetadata,
    lost: number,
    live: ReadonlySet<number>,
  ): PartitionChangeRecord {
    const remaining = p.isr.filter((b) => b !== lost && live.has(b));
    const removed = p.isr.filter((b) => !remaining.includes(b) && !p.elr?.includes(b));
    const minIsr = this.effectiveMinIsr(topic, p);
    // Fenced out of the ISR: they may hold every committed record (KIP-966's ELR). Under
    // min.insync.replicas=1 every one stays eligible (the last ISR member may come back without its log:
    // issue 11's recovery). Above it, as in Kafka, only those that left while the ISR fell under it: while
    // the ISR meets it, the high watermark moves on without them.
    const elr =
      minIsr <= 1
        ? [...(p.elr ?? []), ...removed]
        : remaining.length >= minIsr
          ? []
          : [...(p.elr ?? []), ...removed];
    if (p.leader !== lost) return change(topic.topicId, p, { isr: remaining, elr });
    const leader = p.replicas.find((b) => remaining.includes(b));
    if (leader !== undefined) {
      return change(topic.topicId, p, { leader, isr: remaining, elr, leaderEpoch: p.leaderEpoch + 1 });
    }
    if (this.uncleanElectionEnabled(topic)) {
      const unclean = uncleanLeaderChange(topic, p, (b) => live.has(b));
      if (unclean) return unclean;
    }
    // No replica can lead: keep the last ISR member so it can lead again when it returns (KRaft does this).
    return change(topic.topicId, p, {
      leader: -1,
      isr: p.isr.filter((b) => b === lost),
      elr,
      leaderEpoch: p.leaderEpoch + 1,
    });
  }

  private newPartition(topicId: Uuid, partition: number, replicas: number[]): MetadataRecord {
    const live = new Set(this.image.liveBrokers());
    const isr = replicas.filter((b) => live.has(b));
    return {
      type: "Partition",
      topicId,
      partition,
      replicas,
      isr,
      leader: isr[0] ?? -1,
      leaderEpoch: 0,
      partitionEpoch: 0,
    };
  }

  /** Round-robin placement over live brokers from a random start, as Kafka's rack-unaware assignment does. */
  private assign(numPartitions: number, replicationFactor: number | undefined): number[][] {
    const { live, rf } = this.checkPlacement(numPartitions, replicationFactor);
    const start = Math.floor(this.random.next() * live.length);
    return Array.from({ length: numPartitions }, (_, p) =>
      Array.from({ length: rf }, (_, r) => live[(start + p + r) % live.length]!),
    );
  }

  /** What `assign` refuses: a partition count below 1, a replication factor the live brokers cannot hold. */
  private checkPlacement(
    numPartitions: number,
    replicationFactor: number | undefined,
  ): { live: number[]; rf: number } {
    const live = this.image.liveBrokers();
    if (!Number.isInteger(numPartitions) || numPartitions < 1) {
      throw new ClusterError(
        "INVALID_PARTITIONS",
        `number of partitions must be at least 1, got ${shownValue(numPartitions)}`,
      );
    }
    if (replicationFactor === undefined && live.length === 0) {
      // The default below would be 0: not the caller's replication factor (they gave none), no broker to place on.
      throw new ClusterError(
        "INVALID_REPLICATION_FACTOR",
        "the default replication factor, min(3, live brokers), needs at least one live broker; none are live",
      );
    }
    const rf = replicationFactor ?? Math.min(3, live.length);
    // Not a count at all (0, negative, fractional, a string): saying it "needs that many live brokers" would
    // send the caller looking for brokers ("replication factor 3 needs that many live brokers; 3 are live").
    if (!Number.isInteger(rf) || rf < 1) {
      throw new ClusterError(
        "INVALID_REPLICATION_FACTOR",
        `replication factor must be an integer >= 1, got ${shownValue(rf)}`,
      );
    }
    if (rf > live.length) {
      throw new ClusterError(
        "INVALID_REPLICATION_FACTOR",
        `replication factor ${rf} needs that many live brokers; ${live.length} are live (${live.join(", ") || "none"})`,
      );
    }
    return { live, rf };
  }

  private checkAssignment(assignment: number[][], firstPartition = 0): void {
    if (assignment.length === 0)
      throw new ClusterError("INVALID_PARTITIONS", "a topic needs at least one partition");
    assignment.forEach((replicas, i) => {
      const p = firstPartition + i;
      if (replicas.length === 0 || new Set(replicas).size !== replicas.length) {
        throw new ClusterError(
          "INVALID_REPLICA_ASSIGNMENT",
          `partition ${p}: replicas [${replicas}] must be non-empty and distinct`,
        );
      }
      const unknown = replicas.filter((b) => !this.image.brokers.has(b));
      if (unknown.length > 0) {
        throw new ClusterError("INVALID_REPLICA_ASSIGNMENT", `partition ${p}: unknown brokers [${unknown}]`);
      }
    });
  }

  private newTopicId(): Uuid {
    for (;;) {
      const id = randomUuid(this.random);
      if (!this.image.topicsById.has(id)) return id;
    }
  }

  /** FENCED_LEADER_EPOCH unless `request` names the partition's current leader and epoch. */
  private checkLeader(
    topic: string,
    p: PartitionMetadata,
    request: { leader: number; leaderEpoch: number },
  ): void {
    if (request.leader !== p.leader || request.leaderEpoch !== p.leaderEpoch) {
      throw new ClusterError(
        "FENCED_LEADER_EPOCH",
        `${topic}-${p.partition}: broker ${request.leader} at epoch ${request.leaderEpoch} is not the leader (leader ${p.leader}, epoch ${p.leaderEpoch})`,
      );
    }
  }

  private checkAvailable(what: string): void {
    if (this.closedCluster !== undefined) throw new ClusterClosedError(this.closedCluster, what);
    if (!this.available) {
      throw new ClusterError(
        "NOT_CONTROLLER",
        `cannot ${what}: the controller is failing over (no active controller); retry after a new one is elected`,
      );
    }
  }

  private requireTopic(name: string): TopicMetadata {
    const topic = this.image.topic(name);
    if (!topic) throw new ClusterError("UNKNOWN_TOPIC_OR_PARTITION", `topic '${name}' does not exist`);
    return topic;
  }

  private requireBroker(brokerId: number) {
    const broker = this.image.brokers.get(brokerId);
    if (!broker) throw new ClusterError("BROKER_NOT_AVAILABLE", `broker ${brokerId} is not registered`);
    return broker;
  }

  /** True while a batch is applied and published: a listener must not append from inside (see `append`). */
  private appending = false;

  private append(records: readonly MetadataRecord[]): void {
    // The batch's offsets are fixed before it is journaled; an append from inside a listener would take the
    // same offsets (and reach other listeners before the record they are still waiting for). KRaft runs
    // controller events one at a time; so does this controller.
    if (this.appending) {
      throw new Error(
        "a metadata listener asked the controller for a change while a record batch was published",
      );
    }
    this.appending = true;
    try {
      this.appendBatch(records);
    } finally {
      this.appending = false;
    }
  }

  private appendBatch(records: readonly MetadataRecord[]): void {
    const entries = records.map((record, i) => ({ offset: this.log.length + i, record }));
    // KRaft writes a record batch to the metadata log, atomically, before it applies or publishes any of
    // it: a journal that throws (a full or failing disk) fails the request and changes nothing.
    if (entries.length > 0) this.journal?.(entries);
    for (const entry of entries) {
      this.log.push(entry);
      this.image.apply(entry.record, entry.offset);
      for (const listener of this.listeners) this.deliver(() => listener(entry), entry);
    }
  }

  /**
   * Calls one listener; what it throws goes to `onListenerError`, so it neither stops the other listeners
   * nor fails the change they hear of (KRaft's MetadataLoader hands each publisher's error to its fault
   * handler and goes on with the next publisher).
   */
  private deliver(listener: () => void, entry: MetadataLogEntry | undefined): void {
    try {
      listener();
    } catch (error) {
      this.onListenerError(error, entry);
    }
  }
}

/**
 * An unclean election (`PartitionChangeBuilder.electAnyLeader`'s last resort): the first replica, in
 * assignment order, that `acceptable` lets lead becomes the leader and the whole ISR, and the eligible
 * leader replicas are cleared (KIP-966: none of them is known to hold more than the new leader's log then).
 * Undefined when no replica is acceptable.
 */
function uncleanLeaderChange(
  topic: TopicMetadata,
  p: PartitionMetadata,
  acceptable: (brokerId: number) => boolean,
): PartitionChangeRecord | undefined {
  const leader = p.replicas.find(acceptable);
  if (leader === undefined) return undefined;
  return change(topic.topicId, p, { leader, isr: [leader], elr: [], leaderEpoch: p.leaderEpoch + 1 });
}

function change(
  topicId: Uuid,
  p: PartitionMetadata,
  update: Partial<Pick<PartitionChangeRecord, "leader" | "isr" | "leaderEpoch" | "elr">>,
): PartitionChangeRecord {
  const isr = update.isr ?? [...p.isr];
  // A replica back in the ISR is no longer merely eligible.
  const elr = (update.elr ?? p.elr ?? []).filter((b) => !isr.includes(b));
  return {
    type: "PartitionChange",
    topicId,
    partition: p.partition,
    leader: update.leader ?? p.leader,
    isr,
    leaderEpoch: update.leaderEpoch ?? p.leaderEpoch,
    partitionEpoch: p.partitionEpoch + 1,
    ...(elr.length > 0 || (p.elr?.length ?? 0) > 0 ? { elr } : {}),
  };
}

function mirrorReadOnly(
  topicId: Uuid,
  partition: number,
  readOnly: boolean,
  byMirrorName = false,
): MirrorReadOnlyRecord {
  return { type: "MirrorReadOnly", topicId, partition, readOnly, ...(byMirrorName ? { byMirrorName } : {}) };
}

function requirePartition(topic: TopicMetadata, partition: number): PartitionMetadata {
  const p = topic.partitions[partition];
  if (!p) {
    throw new ClusterError(
      "UNKNOWN_TOPIC_OR_PARTITION",
      `topic '${topic.name}' has no partition ${partition} (it has ${topic.partitions.length})`,
    );
  }
  return p;
}

/**
 * Refuses an invalid topic config with INVALID_CONFIG; returns the value as Kafka describes it (parsed and
 * written back: `+5` is `5`, `TRUE` is `true`), the form stored.
 */
function checkConfig(name: string, value: string): string {
  const problem = validateTopicConfig(name, value);
  if (problem) throw new ClusterError("INVALID_CONFIG", problem);
  return canonicalTopicConfigValue(name, value);
}

/** Refuses an invalid dynamic config of broker `broker` ("" is the cluster default) with INVALID_CONFIG. */
function checkBrokerConfig(broker: string, name: string, value: string): void {
  const problem = validateBrokerConfig(name, value);
  if (problem) {
    const target = broker === "" ? "cluster-wide broker default" : `broker ${broker}`;
    throw new ClusterError("INVALID_CONFIG", `${target}: ${problem}`);
  }
}

function defaultFor(type: "topic" | "broker", name: string): string | undefined {
  return type === "topic" ? (topicConfigDef(name)?.defaultValue ?? undefined) : undefined;
}

function sameSet(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
