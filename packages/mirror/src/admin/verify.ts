import { type AclBinding, type KafkaCluster, offsetKey } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import { aclInScope, aclKey } from "../metadata/acl-sync";
import { clampOffset } from "../metadata/destination-logs";
import { compareStrings, mirrorTopics } from "../metadata/mirror-topics";
import type { SourceCluster, SourceTopicInfo } from "../ports";
import { groupFilter, isExcludedTopicConfig, type MirrorDefinition } from "./mirror-config";
import { batchesCheck } from "./verify-batches";
import { check, counted, leader, partitionCount, sourcePartition, type VerifyCheck } from "./verify-common";

export type { VerifyCheck } from "./verify-common";

/** The answer of `verifyMirror`: every check, and `ok` when all agree. */
export interface MirrorVerification {
  mirror: string;
  /** The mirror's topics compared (mirroring or paused), sorted. */
  topics: string[];
  ok: boolean;
  checks: VerifyCheck[];
}

/**
 * Compares a mirror's destination with its source, reading both (the source through its port, as the
 * engine does, so a network source works too): for every topic of the mirror that is mirroring or paused,
 * - batches: every destination batch below the destination's high watermark equals, byte for byte, the
 *   source's batch at the same base offset, and every source batch there (from the later of both log
 *   starts) is in the destination;
 * - offsets: log start offsets equal (with `log.start.offset.sync.enable=false`, a destination log start
 *   below the source's is kept by design and not a difference), and the destination's log end and high
 *   watermark equal the source's high watermark;
 * - topic ids and partition counts equal;
 * - configs: dynamic topic configs equal, minus what the metadata sync never copies (`isExcludedTopicConfig`
 *   and `topic.properties.exclude`); skipped when `configs.sync.enable=false`;
 * - ACLs: the bindings the mirror syncs (`aclInScope`) equal on both sides (one here that another mirror synced
 *   is that mirror's, not a difference); skipped when `acls.sync.enable=false`;
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
    await offsetsCheck(destination, source, names, sourceTopics, def.logStartOffsetSyncEnable),
    topicIdsCheck(destination, names, sourceTopics),
    configsCheck(destination, def, names, sourceTopics),
    await aclsCheck(destination, def, names, source),
    await groupOffsetsCheck(destination, def, names, source),
  ];
  return { mirror: def.name, topics: names, ok: checks.every((c) => c.ok), checks };
}

async function offsetsCheck(
  destination: KafkaCluster,
  source: SourceCluster,
  topics: readonly string[],
  sourceTopics: ReadonlyMap<string, SourceTopicInfo>,
  followsLogStart: boolean,
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
      // A mirror that does not follow its source's log start keeps what the source deleted (until its own
      // retention drops it): a lower log start here is what it was asked for. A higher one is a loss.
      if (followsLogStart ? log.logStartOffset !== start : log.logStartOffset > start)
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
  const here = inScope(destination.authorizer.describeAcls());
  // A binding another mirror of this cluster synced (fan-in: its source has it, this one's does not) is
  // that mirror's to keep or delete, and its verify's to compare: no difference of this mirror's.
  const owner = (b: AclBinding) => destination.authorizer.ownerOf(b);
  const anothers = (b: AclBinding) => owner(b) !== undefined && owner(b) !== def.name;
  const show = (b: AclBinding) =>
    `${b.permissionType} ${b.principal} ${b.operation} on ${b.resourceType} ${b.patternType} ${b.resourceName}`;
  const diffs = [
    ...[...theirs].filter(([k]) => !here.has(k)).map(([, b]) => `only on the source: ${show(b)}`),
    ...[...here].filter(([k, b]) => !theirs.has(k) && !anothers(b)).map(([, b]) => `only here: ${show(b)}`),
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
  // A source broker (or a group's coordinator) that does not answer leaves its groups not compared: the
  // check says so and is not OK, and the groups of the others are still compared.
  const unanswered: string[] = [];
  const all = (await source.listGroupOffsets({ onError: (e) => unanswered.push(e.message) })).sort((a, b) =>
    compareStrings(a.groupId, b.groupId),
  );
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
  const notListed =
    unanswered.length === 0
      ? ""
      : `; some groups not compared (the source did not answer ${counted(unanswered.length, "request")}: verify again once it answers)`;
  return check(
    "group offsets",
    `${counted(groups, "group")}, ${counted(offsets, "committed offset")}${notCompared}${notListed}`,
    [...unanswered.map((m) => `not compared: ${m}`), ...diffs],
  );
}
