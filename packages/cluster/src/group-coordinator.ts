import type { Clock } from "./clock";
import { ClusterError } from "./errors";
import type { TopicPartition } from "./transaction-coordinator";

/** A committed offset, as OffsetCommit stores it. */
export interface CommittedOffset {
  offset: bigint;
  /** Leader epoch of the record at offset - 1 as the consumer saw it, or -1. */
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number;
}

/** One member of a group. */
export interface GroupMember {
  memberId: string;
  clientId: string;
  topics: string[];
  assignment: TopicPartition[];
  sessionTimeoutMs: number;
  lastHeartbeat: number;
}

/** Group states: Empty has no members (offsets may be changed by admins), Stable has members. */
export type GroupStateName = "Empty" | "Stable" | "Dead";

/** A group as `describeGroup` shows it. */
export interface GroupDescription {
  groupId: string;
  state: GroupStateName;
  generationId: number;
  members: GroupMember[];
}

/** Tells the coordinator how many partitions a topic has (for assignment). */
export type PartitionCount = (topic: string) => number;

/** Settings and ports of the group coordinator. */
export interface GroupCoordinatorOptions {
  clock: Clock;
  partitionCount: PartitionCount;
  /** Called after every change of committed offsets, so an owner can persist them. */
  onOffsetsChanged?: (groupId: string, offsets: ReadonlyMap<string, CommittedOffset>) => void;
}

interface Group {
  groupId: string;
  generationId: number;
  members: Map<string, GroupMember>;
  offsets: Map<string, CommittedOffset>;
  nextMemberIndex: number;
}

/**
 * The group coordinator: committed offsets (with leader epoch) and membership. Assignment is computed by the
 * coordinator (range assignment over the members' subscriptions, as KIP-848's server-side assignor does), and
 * every membership change bumps the generation. Members that stop heartbeating past their session timeout
 * are removed. Offsets of a group with members can only be committed by a member of the current generation;
 * an admin may change offsets only of an Empty group.
 */
export class GroupCoordinator {
  private readonly groups = new Map<string, Group>();
  private readonly options: GroupCoordinatorOptions;
  /**
   * Position of the last offset write (Kafka's record offset in `__consumer_offsets`): commits, deletions,
   * and the TxnOffsetCommit of a transaction's offsets, which are stored at its commit only if nothing was
   * written for their partition since (see `completeTxnOffsets`).
   */
  private position = 0;
  /** Per group and partition (`groupId` NUL `topic:partition`): the position of its last offset write. */
  private readonly lastWrites = new Map<string, number>();

  constructor(options: GroupCoordinatorOptions) {
    this.options = options;
  }

  /** Joins (or rejoins with `memberId`) a group; returns the member id, generation and assignment. */
  joinGroup(request: {
    groupId: string;
    clientId?: string;
    memberId?: string;
    topics: readonly string[];
    sessionTimeoutMs?: number;
  }): { memberId: string; generationId: number; assignment: TopicPartition[] } {
    checkGroupId(request.groupId);
    const group = this.group(request.groupId, true)!;
    const clientId = request.clientId ?? "consumer";
    const memberId = request.memberId ?? `${clientId}-${request.groupId}-${group.nextMemberIndex++}`;
    group.members.set(memberId, {
      memberId,
      clientId,
      topics: [...request.topics],
      assignment: [],
      sessionTimeoutMs: request.sessionTimeoutMs ?? 45_000,
      lastHeartbeat: this.options.clock.now(),
    });
    this.rebalance(group);
    const member = group.members.get(memberId)!;
    return { memberId, generationId: group.generationId, assignment: member.assignment };
  }

  /** Keeps a member alive; returns the current generation and the member's assignment. */
  heartbeat(request: { groupId: string; memberId: string }): {
    generationId: number;
    assignment: TopicPartition[];
  } {
    const member = this.member(request.groupId, request.memberId);
    member.lastHeartbeat = this.options.clock.now();
    return { generationId: this.group(request.groupId)!.generationId, assignment: member.assignment };
  }

  /** Leaves a group; the others are rebalanced. */
  leaveGroup(request: { groupId: string; memberId: string }): void {
    this.member(request.groupId, request.memberId);
    const group = this.group(request.groupId)!;
    group.members.delete(request.memberId);
    this.rebalance(group);
  }

  /** Removes members whose session expired; returns their ids. */
  expireMembers(): string[] {
    const now = this.options.clock.now();
    const expired: string[] = [];
    for (const group of this.groups.values()) {
      let changed = false;
      for (const m of [...group.members.values()]) {
        if (now - m.lastHeartbeat < m.sessionTimeoutMs) continue;
        group.members.delete(m.memberId);
        expired.push(m.memberId);
        changed = true;
      }
      if (changed) this.rebalance(group);
    }
    return expired;
  }

  /**
   * Commits offsets. For a group with members, `memberId` and `generationId` must be current; without
   * them the commit is a "simple" (standalone or admin) commit, allowed only while the group is Empty.
   */
  commitOffsets(request: {
    groupId: string;
    memberId?: string;
    generationId?: number;
    offsets: readonly (TopicPartition & { offset: bigint; leaderEpoch?: number; metadata?: string })[];
  }): void {
    checkGroupId(request.groupId);
    const group = this.group(request.groupId, true)!;
    if (group.members.size > 0 || request.memberId !== undefined) {
      if (request.memberId === undefined) {
        throw new ClusterError(
          "NON_EMPTY_GROUP",
          `group '${request.groupId}' has ${group.members.size} active member(s); only they can commit, or stop them first`,
        );
      }
      this.checkGeneration(group, request.memberId, request.generationId);
    }
    this.storeOffsets(group, request.offsets);
  }

  /**
   * Checks a transaction's offsets when it sends them (TxnOffsetCommit; Kafka's ClassicGroup
   * .validateOffsetCommit for a transactional commit): with member information, the member must be in the
   * group and of its current generation; without (kafkajs's TxnOffsetCommit v0-2 carries none), any state
   * of the group is accepted. Nothing is checked again when the transaction commits (`completeTxnOffsets`).
   * Returns the position of the TxnOffsetCommit's write, to give `completeTxnOffsets`.
   */
  validateTxnOffsetCommit(request: { groupId: string; memberId?: string; generationId?: number }): number {
    checkGroupId(request.groupId);
    if (request.memberId !== undefined) {
      const group = this.group(request.groupId);
      if (!group)
        this.member(request.groupId, request.memberId); // throws UNKNOWN_MEMBER_ID
      else this.checkGeneration(group, request.memberId, request.generationId);
    }
    return ++this.position;
  }

  /**
   * Stores the offsets a committed transaction sent (checked by `validateTxnOffsetCommit` when they were,
   * each at its `position`): Kafka's OffsetMetadataManager.replayEndTransactionMarker, whatever the group's
   * members and generation are by then. A partition whose offset was written since (committed, set,
   * deleted: a later record of `__consumer_offsets`) keeps that write, as Kafka keeps the most recent one.
   */
  completeTxnOffsets(
    groupId: string,
    offsets: readonly (TopicPartition & { offset: bigint; position: number })[],
  ): void {
    checkGroupId(groupId);
    const current = offsets.filter((o) => (this.lastWrites.get(writeKey(groupId, o)) ?? 0) < o.position);
    if (current.length > 0) this.storeOffsets(this.group(groupId, true)!, current, (o) => o.position);
  }

  private checkGeneration(group: Group, memberId: string, generationId: number | undefined): void {
    this.member(group.groupId, memberId);
    if (generationId !== group.generationId) {
      throw new ClusterError(
        "ILLEGAL_GENERATION",
        `generation ${generationId} of group '${group.groupId}' is stale (now ${group.generationId}); rejoin`,
      );
    }
  }

  /** Stores offsets, each written at `positionOf` it (by default, all at the next position). */
  private storeOffsets<
    T extends TopicPartition & { offset: bigint; leaderEpoch?: number; metadata?: string },
  >(group: Group, offsets: readonly T[], positionOf?: (offset: T) => number): void {
    for (const o of offsets) {
      if (o.offset < 0n) {
        throw new ClusterError(
          "INVALID_REQUEST",
          `offset ${o.offset} for ${o.topic}-${o.partition} is negative`,
        );
      }
    }
    const now = this.options.clock.now();
    const next = positionOf ? 0 : ++this.position;
    for (const o of offsets) {
      this.lastWrites.set(writeKey(group.groupId, o), positionOf ? positionOf(o) : next);
      group.offsets.set(key(o), {
        offset: o.offset,
        leaderEpoch: o.leaderEpoch ?? -1,
        metadata: o.metadata ?? "",
        commitTimestamp: now,
      });
    }
    this.options.onOffsetsChanged?.(group.groupId, group.offsets);
  }

  /** Admin's AlterConsumerGroupOffsets: refused while the group has members. */
  alterOffsets(
    groupId: string,
    offsets: readonly (TopicPartition & { offset: bigint; leaderEpoch?: number; metadata?: string })[],
  ): void {
    this.commitOffsets({ groupId, offsets });
  }

  /** Committed offsets of a group (all, or those of the given partitions). */
  fetchOffsets(groupId: string, partitions?: readonly TopicPartition[]): Map<string, CommittedOffset> {
    const group = this.group(groupId);
    const all = group?.offsets ?? new Map<string, CommittedOffset>();
    if (!partitions) return new Map(all);
    return new Map(partitions.flatMap((tp) => (all.has(key(tp)) ? [[key(tp), all.get(key(tp))!]] : [])));
  }

  /** Deletes committed offsets of the given partitions (admin; refused while members consume the topic). */
  deleteOffsets(groupId: string, partitions: readonly TopicPartition[]): void {
    const group = this.requireGroup(groupId);
    const busy = partitions.find((tp) =>
      [...group.members.values()].some((m) => m.topics.includes(tp.topic)),
    );
    if (busy) {
      throw new ClusterError(
        "GROUP_SUBSCRIBED_TO_TOPIC",
        `group '${groupId}' has members subscribed to '${busy.topic}'; stop them before deleting its offsets`,
      );
    }
    const position = ++this.position;
    for (const tp of partitions) {
      group.offsets.delete(key(tp));
      this.lastWrites.set(writeKey(groupId, tp), position); // a tombstone
    }
    this.options.onOffsetsChanged?.(groupId, group.offsets);
  }

  /**
   * A topic was deleted: every group forgets its committed offsets for it (Kafka's
   * GroupCoordinator.onPartitionsDeleted), so a topic created again under the name starts with none.
   */
  onTopicDeleted(topic: string): void {
    for (const group of this.groups.values()) {
      let changed = false;
      for (const k of [...group.offsets.keys()]) {
        if (parseKey(k) !== topic) continue;
        group.offsets.delete(k);
        changed = true;
      }
      if (changed) this.options.onOffsetsChanged?.(group.groupId, group.offsets);
    }
  }

  /**
   * The partition's log was cut at `end` (a mirror's failback or re-add truncation): every group's committed
   * offset past it is moved back to `end`, with `leaderEpoch` (the epoch of the record before `end` in the
   * cut log, or -1). The records the group read there are gone and others will take their offsets; left
   * alone, its consumers would resume past records they never read. Membership is not asked (as
   * `onTopicDeleted`): the offset is wrong whoever committed it. Returns the groups changed.
   */
  clampOffsets(tp: TopicPartition, end: bigint, leaderEpoch: number): string[] {
    const changed: string[] = [];
    const k = key(tp);
    for (const group of this.groups.values()) {
      const committed = group.offsets.get(k);
      if (committed === undefined || committed.offset <= end) continue;
      group.offsets.set(k, { ...committed, offset: end, leaderEpoch });
      // A write: an offset a transaction sent before the cut does not replace it at its commit.
      this.lastWrites.set(writeKey(group.groupId, tp), ++this.position);
      changed.push(group.groupId);
      this.options.onOffsetsChanged?.(group.groupId, group.offsets);
    }
    return changed;
  }

  /** Every group with its state. */
  listGroups(): { groupId: string; state: GroupStateName }[] {
    return [...this.groups.values()].map((g) => ({ groupId: g.groupId, state: stateOf(g) }));
  }

  /** One group's state, generation and members; an unknown group is described as Dead. */
  describeGroup(groupId: string): GroupDescription {
    const g = this.group(groupId);
    if (!g) return { groupId, state: "Dead", generationId: -1, members: [] };
    return {
      groupId,
      state: stateOf(g),
      generationId: g.generationId,
      members: [...g.members.values()].map((m) => structuredClone(m)),
    };
  }

  /** Deletes an Empty group and its offsets. */
  deleteGroup(groupId: string): void {
    const group = this.requireGroup(groupId);
    if (group.members.size > 0) {
      throw new ClusterError(
        "NON_EMPTY_GROUP",
        `group '${groupId}' has active members; stop them before deleting it`,
      );
    }
    const position = ++this.position;
    for (const k of group.offsets.keys()) this.lastWrites.set(`${groupId}\u0000${k}`, position); // tombstones
    this.groups.delete(groupId);
    this.options.onOffsetsChanged?.(groupId, new Map());
  }

  /** Restores a group's committed offsets (after a restart, from the owner's persisted copy). */
  loadOffsets(groupId: string, offsets: ReadonlyMap<string, CommittedOffset>): void {
    const group = this.group(groupId, true)!;
    for (const [k, v] of offsets) group.offsets.set(k, { ...v });
  }

  private rebalance(group: Group): void {
    group.generationId++;
    const members = [...group.members.values()].sort((a, b) => (a.memberId < b.memberId ? -1 : 1));
    for (const m of members) m.assignment = [];
    const topics = [...new Set(members.flatMap((m) => m.topics))].sort();
    for (const topic of topics) {
      const subscribers = members.filter((m) => m.topics.includes(topic));
      const count = this.options.partitionCount(topic);
      const per = Math.floor(count / subscribers.length);
      const extra = count % subscribers.length;
      let next = 0;
      subscribers.forEach((m, i) => {
        const n = per + (i < extra ? 1 : 0);
        for (let p = next; p < next + n; p++) m.assignment.push({ topic, partition: p });
        next += n;
      });
    }
  }

  private group(groupId: string, create = false): Group | undefined {
    let g = this.groups.get(groupId);
    if (!g && create) {
      g = { groupId, generationId: 0, members: new Map(), offsets: new Map(), nextMemberIndex: 0 };
      this.groups.set(groupId, g);
    }
    return g;
  }

  private requireGroup(groupId: string): Group {
    const g = this.group(groupId);
    if (!g) throw new ClusterError("GROUP_ID_NOT_FOUND", `group '${groupId}' does not exist`);
    return g;
  }

  private member(groupId: string, memberId: string): GroupMember {
    const m = this.group(groupId)?.members.get(memberId);
    if (!m) {
      throw new ClusterError(
        "UNKNOWN_MEMBER_ID",
        `member '${memberId}' is not in group '${groupId}' (it left or its session expired); rejoin`,
      );
    }
    return m;
  }
}

/** Key of a group's partition in `lastWrites`. */
function writeKey(groupId: string, tp: TopicPartition): string {
  return `${groupId}\u0000${key(tp)}`;
}

/** Map key of a partition in offset maps: `topic:partition`. */
export function offsetKey(tp: TopicPartition): string {
  return `${tp.topic}:${tp.partition}`;
}

const key = offsetKey;

/** The topic of an offsets map key (`topic:partition`; a topic name has no colon, the partition none). */
function parseKey(k: string): string {
  return k.slice(0, k.lastIndexOf(":"));
}

function stateOf(g: Group): GroupStateName {
  return g.members.size > 0 ? "Stable" : "Empty";
}

function checkGroupId(groupId: string): void {
  if (groupId === "") throw new ClusterError("INVALID_REQUEST", "group id must not be empty");
}
