import { type AclBinding, type KafkaCluster, offsetKey } from "@cluster-mirror/cluster";
import { KafkaError, type RecordBatch, recordBatches } from "@cluster-mirror/protocol";
import { aclInScope, aclKey } from "../metadata/acl-sync";
import { clampOffset } from "../metadata/destination-logs";
import { compareStrings, mirrorTopics } from "../metadata/mirror-topics";
import type { SourceCluster, SourceTopicInfo } from "../ports";
import { groupFilter, isExcludedTopicConfig, type MirrorDefinition } from "./mirror-config";
import { compareLatestByKey, latestCommittedByKey } from "./verify-compacted";

/** One line of `cluster-mirror verify`: what was compared, whether source and destination agree, and where not. */
export interface VerifyCheck {
  /** `batches`, `offsets`, `topic ids`, `configs`, `acls`, `group offsets`. */
  check: string;
  ok: boolean;
  /** What was compared, e.g. `5 partitions, 42 batches`. */
  compared: string;
  /** Each difference found (empty when ok); for a check not compared, why and what to do. */
  differences: string[];
  /** Set when the check could not be made (the source refused to describe what it compares): not ok. */
  notCompared?: true;
}

/** The answer of `verifyMirror`: every check, and `ok` when all agree. */
export interface MirrorVerification {
  mirror: string;
  /** The mirror's topics compared (mirroring or paused), sorted. */
  topics: string[];
  ok: boolean;
  checks: VerifyCheck[];
}

/** Largest fetch of one verify round trip. */
const FETCH_BYTES = 4 * 1024 * 1024;
/** Differences listed per check (the count says how many more). */
const MAX_LISTED = 20;

/**
 * Compares a mirror's destination with its source, reading both (the source through its port, as the
 * engine does, so a network source works too): for every topic of the mirror that is mirroring or paused,
 * - batches: every destination batch below the destination's high watermark equals, byte for byte, the
 *   source's batch at the same base offset, and every source batch there (from the later of both log
 *   starts) is in the destination;
 * - offsets: log start offsets equal, and the destination's log end and high watermark equal the source's
 *   high watermark;
 * - topic ids and partition counts equal;
 * - configs: dynamic topic configs equal, minus what the metadata sync never copies (`isExcludedTopicConfig`
 *   and `topic.properties.exclude`); skipped when `configs.sync.enable=false`;
 * - ACLs: the bindings the mirror syncs (`aclInScope`) equal on both sides; skipped when `acls.sync.enable=false`;
 * - group offsets: for the included groups, each source offset on these topics, clamped to the destination
 *   log as the sync clamps it, equals the destination's committed offset.
 * Reads only. Throws what the source throws when it does not answer, except a refused DescribeAcls: the
 * ACL check is then `notCompared` (not ok) and the others still answer.
 */
export async function verifyMirror(
  destination: KafkaCluster,
  def: MirrorDefinition,
  source: SourceCluster,
): Promise<MirrorVerification> {
  const topics = mirrorTopics(destination.controller.image, def.name)
    .filter((t) => t.desired !== "REMOVED")
    .sort((a, b) => compareStrings(a.name, b.name));
  const names = topics.map((t) => t.name);
  const mirrored = new Set(names);
  const sourceTopics = new Map(
    (await source.describeTopics({ configsOf: (name) => mirrored.has(name) })).map((t) => [t.name, t]),
  );
  const checks = [
    await batchesCheck(destination, source, names, sourceTopics),
    await offsetsCheck(destination, source, names, sourceTopics),
    topicIdsCheck(destination, names, sourceTopics),
    configsCheck(destination, def, names, sourceTopics),
    await aclsCheck(destination, def, names, source),
    await groupOffsetsCheck(destination, def, names, source),
  ];
  return { mirror: def.name, topics: names, ok: checks.every((c) => c.ok), checks };
}

/** "1 topic", "2 topics": a count with its noun. */
function counted(n: number | bigint, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 || n === 1n ? singular : plural}`;
}

function check(name: string, compared: string, differences: string[]): VerifyCheck {
  const listed = differences.slice(0, MAX_LISTED);
  if (differences.length > MAX_LISTED) listed.push(`... ${differences.length - MAX_LISTED} more`);
  return { check: name, ok: differences.length === 0, compared, differences: listed };
}

function leader(destination: KafkaCluster, topic: string, partition: number) {
  const meta = destination.controller.image.partition(topic, partition);
  if (!meta || meta.leader < 0) return undefined;
  return destination.broker(meta.leader)?.replica(topic, partition)?.log;
}

/** The source's partition as it described it, undefined when it has no such topic or partition. */
function sourcePartition(
  sourceTopics: ReadonlyMap<string, SourceTopicInfo>,
  topic: string,
  partition: number,
) {
  return sourceTopics.get(topic)?.partitions.find((x) => x.partition === partition);
}

function partitionCount(destination: KafkaCluster, topic: string): number {
  return destination.controller.image.topic(topic)?.partitions.length ?? 0;
}

async function batchesCheck(
  destination: KafkaCluster,
  source: SourceCluster,
  topics: readonly string[],
  sourceTopics: ReadonlyMap<string, SourceTopicInfo>,
): Promise<VerifyCheck> {
  const diffs: string[] = [];
  let partitions = 0;
  let compared = 0;
  let byKey = 0;
  for (const topic of topics) {
    const compacted = isCompacted(destination, topic);
    for (let p = 0; p < partitionCount(destination, topic); p++) {
      partitions++;
      const log = leader(destination, topic, p);
      if (!log) {
        diffs.push(`${topic}-${p}: no running leader on the destination`);
        continue;
      }
      const hw = log.highWatermark;
      // The source asked only about partitions it described with a leader: ListOffsets of any other throws,
      // and one partition must not cost the verdict on all the others.
      const described = sourcePartition(sourceTopics, topic, p);
      if (!described || described.leaderId < 0) {
        if (log.logStartOffset < hw)
          diffs.push(`${topic}-${p}: ${described ? "the source has no leader for it" : "not on the source"}`);
        continue;
      }
      let leaderId = described.leaderId;
      // Below the source's log start the source has nothing to compare with, and below the destination's
      // this one holds nothing by design (the offsets check reports either start that differs).
      const sourceStart = await source.listOffsets(topic, p, -2n);
      const from = sourceStart > log.logStartOffset ? sourceStart : log.logStartOffset;
      const mine = [...log.batches()].filter((b) => b.lastOffset < hw && b.lastOffset >= sourceStart);
      const mineBases = new Set(mine.map((b) => b.baseOffset));
      // The source is walked from the start both hold up to the destination's high watermark, not only
      // at the destination's batches: a batch missing here (a gap in the copy) must show as a difference.
      // A compacted topic's walk goes on to the source's high watermark: a key written again above the
      // copy's is the copy's lag, not a difference, should the batches be compared by key (below).
      const limit = compacted ? maxOf(hw, await source.listOffsets(topic, p, -1n)) : hw;
      const partDiffs: string[] = [];
      const theirAll: RecordBatch[] = [];
      let complete = true;
      let i = 0;
      let at = from;
      while (at < limit) {
        // A fetch at an offset inside a batch (a log start moved by DeleteRecords) answers the whole batch.
        let theirs = await fetchBatches(source, leaderId, topic, p, at);
        // The source's leader moved since it was described (a leader election, a broker restarting): ask the
        // new one, as a consumer would, rather than report a difference that is not there.
        for (let retry = 0; leaderMoved(theirs) && retry < LEADER_RETRIES; retry++) {
          const now = (await source.partitionLeaders([topic])).find((x) => x.partition === p)?.leaderId;
          if (now === undefined || now < 0) break;
          leaderId = now;
          theirs = await fetchBatches(source, leaderId, topic, p, at);
        }
        if (theirs instanceof Error) {
          partDiffs.push(`${topic}-${p}: the source refused the fetch at offset ${at}: ${theirs.message}`);
          complete = false;
          break;
        }
        if (theirs.length === 0) {
          if (at >= hw) break;
          const left = mine.length - i;
          partDiffs.push(
            left > 0
              ? `${topic}-${p}: ${left} batch(es) from offset ${mine[i]!.baseOffset} not on the source`
              : `${topic}-${p}: the source holds nothing from offset ${at}, the destination up to ${hw}`,
          );
          break;
        }
        const end = theirs[theirs.length - 1]!.lastOffset + 1n;
        if (end <= at) {
          // Nothing at or after the offset asked for: a source answering so would never move on.
          partDiffs.push(`${topic}-${p}: the source answered no batch at or after offset ${at}`);
          complete = false;
          break;
        }
        if (compacted) for (const b of theirs) theirAll.push(b.batch);
        const byBase = new Map(theirs.map((b) => [b.baseOffset, b.buffer]));
        for (; i < mine.length && mine[i]!.baseOffset < end; i++) {
          const batch = mine[i]!;
          const other = byBase.get(batch.baseOffset);
          compared++;
          if (!other) partDiffs.push(`${topic}-${p}: batch at offset ${batch.baseOffset} not on the source`);
          else if (!other.equals(batch.buffer))
            partDiffs.push(`${topic}-${p}: batch at offset ${batch.baseOffset} differs`);
        }
        for (const b of theirs) {
          if (b.baseOffset < hw && b.lastOffset >= at && !mineBases.has(b.baseOffset))
            partDiffs.push(`${topic}-${p}: batch at offset ${b.baseOffset} of the source missing here`);
        }
        at = end;
      }
      if (!compacted || !complete || partDiffs.length === 0) {
        diffs.push(...partDiffs);
        continue;
      }
      // A compacted topic whose cleaner ran on one side after the copy differs byte for byte while both
      // hold the same data: compared by the latest committed record of each key instead, as a consumer
      // reading either to its end would see it (the same offset and value for every key).
      byKey++;
      const mineByKey = latestCommittedByKey(
        [...log.batches()].filter((b) => b.lastOffset < hw),
        from,
        hw,
      );
      const theirsByKey = latestCommittedByKey(theirAll, from, limit);
      const where = `${topic}-${p} (compacted, ${partDiffs.length} batch difference(s): compared by latest record per key)`;
      diffs.push(...compareLatestByKey(mineByKey, theirsByKey, hw, where, MAX_LISTED));
    }
  }
  const keyed =
    byKey > 0 ? `, ${counted(byKey, "compacted partition")} whose cleaners rewrote one side by key` : "";
  return check(
    "batches",
    `${counted(partitions, "partition")}, ${counted(compared, "batch", "batches")} byte for byte up to the destination HW${keyed}`,
    diffs,
  );
}

/** Whether the destination topic is compacted (`cleanup.policy` names `compact`). */
function isCompacted(destination: KafkaCluster, topic: string): boolean {
  const policy = destination.controller.image.topic(topic)?.configs.get("cleanup.policy") ?? "";
  return policy.split(",").some((p) => p.trim() === "compact");
}

const maxOf = (a: bigint, b: bigint) => (a > b ? a : b);

/** Fetches of one offset sent again to the partition's current source leader after it moved. */
const LEADER_RETRIES = 3;

/** A fetch answer that means "ask the partition's current leader", as Kafka's consumers read these. */
function leaderMoved(answer: SourceBatch[] | Error): boolean {
  if (!(answer instanceof KafkaError)) return false;
  return [
    "NOT_LEADER_OR_FOLLOWER",
    "LEADER_NOT_AVAILABLE",
    "FENCED_LEADER_EPOCH",
    "UNKNOWN_LEADER_EPOCH",
    "BROKER_NOT_AVAILABLE",
  ].includes(answer.errorName);
}

/** One whole batch as the source stores it. */
interface SourceBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  buffer: Buffer;
  batch: RecordBatch;
}

/** The source's whole batches from `offset` on (one fetch), in offset order; the partition's error if it failed. */
async function fetchBatches(
  source: SourceCluster,
  brokerId: number,
  topic: string,
  partition: number,
  offset: bigint,
): Promise<SourceBatch[] | Error> {
  let response: Awaited<ReturnType<SourceCluster["fetch"]>>;
  try {
    response = await source.fetch({
      clientId: "cluster-mirror-verify",
      brokerId,
      maxBytes: FETCH_BYTES,
      // One-off: a fetch session opened for it would stay on the source broker after the verify.
      sessionless: true,
      partitions: [
        {
          topic,
          partition,
          fetchOffset: offset,
          lastFetchedEpoch: -1,
          currentLeaderEpoch: -1,
          maxBytes: FETCH_BYTES,
        },
      ],
    });
  } catch (error) {
    // The broker it was sent to is gone (a leader moving with it): the caller asks the new leader.
    if (error instanceof KafkaError && error.errorName === "BROKER_NOT_AVAILABLE") return error;
    throw error;
  }
  const result = response.partitions[0];
  if (result?.error) return result.error;
  return [...recordBatches(Buffer.concat(result?.recordSlices ?? []))].map((b) => ({
    baseOffset: b.baseOffset,
    lastOffset: b.lastOffset,
    buffer: b.buffer,
    batch: b,
  }));
}

async function offsetsCheck(
  destination: KafkaCluster,
  source: SourceCluster,
  topics: readonly string[],
  sourceTopics: ReadonlyMap<string, SourceTopicInfo>,
): Promise<VerifyCheck> {
  const diffs: string[] = [];
  let partitions = 0;
  let offsets = 0n;
  for (const topic of topics) {
    if (!sourceTopics.has(topic)) continue; // reported by the topic id check
    for (let p = 0; p < partitionCount(destination, topic); p++) {
      partitions++;
      const log = leader(destination, topic, p);
      const described = sourcePartition(sourceTopics, topic, p);
      if (!described || described.leaderId < 0) {
        diffs.push(`${topic}-${p}: ${described ? "the source has no leader for it" : "not on the source"}`);
        continue;
      }
      const [start, end] = await Promise.all([
        source.listOffsets(topic, p, -2n),
        source.listOffsets(topic, p, -1n),
      ]);
      offsets += end - start;
      if (!log) {
        diffs.push(`${topic}-${p}: no running leader on the destination`);
        continue;
      }
      if (log.logStartOffset !== start)
        diffs.push(`${topic}-${p}: log start ${log.logStartOffset} here, ${start} on the source`);
      if (log.logEndOffset !== end)
        diffs.push(`${topic}-${p}: log end ${log.logEndOffset} here, source high watermark ${end}`);
      // The batches check stops at the high watermark: a tail above it is neither compared nor replicated
      // (a leader change would drop it), so a copy is whole only when its high watermark is there too.
      else if (log.highWatermark !== end)
        diffs.push(
          `${topic}-${p}: high watermark ${log.highWatermark} here, below its log end ${end} (not yet replicated to the ISR), source high watermark ${end}`,
        );
    }
  }
  return check(
    "offsets",
    `${counted(partitions, "partition")} (log start, log end), ${counted(offsets, "offset")}`,
    diffs,
  );
}

function topicIdsCheck(
  destination: KafkaCluster,
  topics: readonly string[],
  sourceTopics: ReadonlyMap<string, SourceTopicInfo>,
): VerifyCheck {
  const diffs: string[] = [];
  for (const topic of topics) {
    const mine = destination.controller.image.topic(topic)!;
    const theirs = sourceTopics.get(topic);
    if (!theirs) diffs.push(`${topic}: not on the source`);
    else if (theirs.topicId !== mine.topicId)
      diffs.push(`${topic}: id ${mine.topicId} here, ${theirs.topicId} on the source`);
    else if (theirs.partitions.length !== mine.partitions.length)
      diffs.push(
        `${topic}: ${mine.partitions.length} partitions here, ${theirs.partitions.length} on the source`,
      );
  }
  return check("topic ids", `${counted(topics.length, "topic")} (id, partition count)`, diffs);
}

function configsCheck(
  destination: KafkaCluster,
  def: MirrorDefinition,
  topics: readonly string[],
  sourceTopics: ReadonlyMap<string, SourceTopicInfo>,
): VerifyCheck {
  if (!def.configsSyncEnable) return check("configs", "not compared (configs.sync.enable=false)", []);
  const synced = (name: string) => !isExcludedTopicConfig(name, def.topicPropertiesExclude);
  const diffs: string[] = [];
  let count = 0;
  for (const topic of topics) {
    const theirs = sourceTopics.get(topic);
    if (!theirs) continue;
    if (theirs.configs === undefined) {
      diffs.push(
        `${topic}: the source did not describe its configs (DescribeConfigs refused?): not compared`,
      );
      continue;
    }
    const mine = destination.controller.image.topic(topic)?.configs ?? new Map<string, string>();
    const a = new Map([...mine].filter(([k]) => synced(k)));
    const b = new Map(Object.entries(theirs.configs).filter(([k]) => synced(k)));
    count += b.size;
    for (const k of [...new Set([...a.keys(), ...b.keys()])].sort(compareStrings)) {
      if (a.get(k) !== b.get(k))
        diffs.push(`${topic}: ${k}=${a.get(k) ?? "(unset)"} here, ${b.get(k) ?? "(unset)"} on the source`);
    }
  }
  return check(
    "configs",
    `${counted(topics.length, "topic")}, ${counted(count, "synced dynamic config")} (exclusions left out)`,
    diffs,
  );
}

async function aclsCheck(
  destination: KafkaCluster,
  def: MirrorDefinition,
  topics: readonly string[],
  source: SourceCluster,
): Promise<VerifyCheck> {
  if (!def.aclsSyncEnable) return check("acls", "not compared (acls.sync.enable=false)", []);
  const scope = new Set(topics);
  const groups = groupFilter(def);
  const inScope = (list: readonly AclBinding[]) =>
    new Map(list.filter((b) => aclInScope(b, scope, groups, def.aclsInclude)).map((b) => [aclKey(b), b]));
  let described: AclBinding[] | undefined;
  try {
    described = await source.describeAcls();
  } catch (error) {
    // The mirror's principal lacks DESCRIBE on the source's CLUSTER (Kafka's rule for DescribeAcls): the
    // ACLs are unknown, which is no verdict on the records, so the other checks still answer.
    if (!(error instanceof KafkaError && error.errorName === "CLUSTER_AUTHORIZATION_FAILED")) throw error;
    return {
      check: "acls",
      ok: false,
      notCompared: true,
      compared: "not compared (the source refused DescribeAcls: CLUSTER_AUTHORIZATION_FAILED)",
      differences: [
        "grant the mirror's principal DESCRIBE on the source's CLUSTER (the ACL sync needs it too), or set acls.sync.enable=false",
      ],
    };
  }
  if (described === undefined) return check("acls", "not compared (the source runs no authorizer)", []);
  const theirs = inScope(described);
  const mine = inScope(destination.authorizer.describeAcls());
  const show = (b: AclBinding) =>
    `${b.permissionType} ${b.principal} ${b.operation} on ${b.resourceType} ${b.patternType} ${b.resourceName}`;
  const diffs = [
    ...[...theirs].filter(([k]) => !mine.has(k)).map(([, b]) => `only on the source: ${show(b)}`),
    ...[...mine].filter(([k]) => !theirs.has(k)).map(([, b]) => `only here: ${show(b)}`),
  ];
  return check("acls", `${counted(theirs.size, "binding")} the mirror syncs`, diffs);
}

async function groupOffsetsCheck(
  destination: KafkaCluster,
  def: MirrorDefinition,
  topics: readonly string[],
  source: SourceCluster,
): Promise<VerifyCheck> {
  const filter = groupFilter(def);
  const scope = new Set(topics);
  const diffs: string[] = [];
  let groups = 0;
  let offsets = 0;
  let owned = 0;
  const all = (await source.listGroupOffsets()).sort((a, b) => compareStrings(a.groupId, b.groupId));
  for (const group of all) {
    if (!filter.matches(group.groupId)) continue;
    const wanted = group.offsets.filter((o) => scope.has(o.topic));
    if (wanted.length === 0) continue;
    // The sync leaves a group with members here to them (spec §7): their own commits are not a difference.
    if (destination.groups.describeGroup(group.groupId).state === "Stable") {
      owned++;
      continue;
    }
    groups++;
    const mine = destination.groups.fetchOffsets(group.groupId);
    for (const o of wanted) {
      offsets++;
      const log = leader(destination, o.topic, o.partition);
      const expected = log ? clampOffset(o.offset, log.logStartOffset, log.highWatermark) : o.offset;
      const actual = mine.get(offsetKey(o))?.offset;
      if (actual !== expected)
        diffs.push(
          `${group.groupId} ${o.topic}-${o.partition}: ${actual ?? "(none)"} here, ${o.offset} on the source`,
        );
    }
  }
  const notCompared = owned === 0 ? "" : `; ${counted(owned, "group")} with members here not compared`;
  return check(
    "group offsets",
    `${counted(groups, "group")}, ${counted(offsets, "committed offset")}${notCompared}`,
    diffs,
  );
}
