import { type AclBinding, type KafkaCluster, offsetKey } from "@cluster-mirror/cluster";
import { recordBatches } from "@cluster-mirror/protocol";
import { aclInScope, aclKey } from "../metadata/acl-sync";
import { clampOffset } from "../metadata/destination-logs";
import { compareStrings, mirrorTopics } from "../metadata/mirror-topics";
import type { SourceCluster, SourceTopicInfo } from "../ports";
import { groupFilter, isExcludedTopicConfig, type MirrorDefinition } from "./mirror-config";

/** One line of `cluster-mirror verify`: what was compared, whether source and destination agree, and where not. */
export interface VerifyCheck {
  /** `batches`, `offsets`, `topic ids`, `configs`, `acls`, `group offsets`. */
  check: string;
  ok: boolean;
  /** What was compared, e.g. `5 partitions, 42 batches`. */
  compared: string;
  /** Each difference found (empty when ok). */
  differences: string[];
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
 *   source's batch at the same base offset;
 * - offsets: log start offsets equal, and the destination's log end equals the source's high watermark;
 * - topic ids and partition counts equal;
 * - configs: dynamic topic configs equal, minus what the metadata sync never copies (`isExcludedTopicConfig`
 *   and `topic.properties.exclude`); skipped when `configs.sync.enable=false`;
 * - ACLs: the bindings the mirror syncs (`aclInScope`) equal on both sides; skipped when `acls.sync.enable=false`;
 * - group offsets: for the included groups, each source offset on these topics, clamped to the destination
 *   log as the sync clamps it, equals the destination's committed offset.
 * Reads only. Throws what the source throws when it does not answer.
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
  for (const topic of topics) {
    for (let p = 0; p < partitionCount(destination, topic); p++) {
      partitions++;
      const log = leader(destination, topic, p);
      if (!log) {
        diffs.push(`${topic}-${p}: no running leader on the destination`);
        continue;
      }
      const hw = log.highWatermark;
      // Below the source's log start the source has nothing to compare with (the offsets check reports it).
      const sourceStart = sourceTopics.has(topic) ? await source.listOffsets(topic, p, -2n) : 0n;
      const mine = [...log.batches()].filter((b) => b.lastOffset < hw && b.lastOffset >= sourceStart);
      const leaderId = sourceTopics.get(topic)?.partitions.find((x) => x.partition === p)?.leaderId ?? -1;
      if (mine.length > 0 && leaderId < 0) {
        diffs.push(`${topic}-${p}: the source has no leader for it`);
        continue;
      }
      let i = 0;
      while (i < mine.length) {
        // A batch the source's log start falls inside (DeleteRecords) is fetched at that start: the source
        // refuses offsets below it, and answers with the whole batch holding it.
        const base = mine[i]!.baseOffset;
        const at = base < sourceStart ? sourceStart : base;
        const theirs = await fetchBatches(source, leaderId, topic, p, at);
        if (theirs instanceof Error) {
          diffs.push(`${topic}-${p}: the source refused the fetch at offset ${at}: ${theirs.message}`);
          break;
        }
        if (theirs.size === 0) {
          diffs.push(
            `${topic}-${p}: ${mine.length - i} batch(es) from offset ${mine[i]!.baseOffset} not on the source`,
          );
          break;
        }
        const last = [...theirs.keys()].reduce((a, b) => (a > b ? a : b));
        for (; i < mine.length && mine[i]!.baseOffset <= last; i++) {
          const batch = mine[i]!;
          const other = theirs.get(batch.baseOffset);
          compared++;
          if (!other) diffs.push(`${topic}-${p}: batch at offset ${batch.baseOffset} not on the source`);
          else if (!other.equals(batch.buffer))
            diffs.push(`${topic}-${p}: batch at offset ${batch.baseOffset} differs`);
        }
      }
    }
  }
  return check(
    "batches",
    `${counted(partitions, "partition")}, ${counted(compared, "batch", "batches")} byte for byte up to the destination HW`,
    diffs,
  );
}

/** The source's whole batches from `offset` on (one fetch), by base offset; the partition's error if it failed. */
async function fetchBatches(
  source: SourceCluster,
  brokerId: number,
  topic: string,
  partition: number,
  offset: bigint,
): Promise<Map<bigint, Buffer> | Error> {
  const response = await source.fetch({
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
  const result = response.partitions[0];
  if (result?.error) return result.error;
  const out = new Map<bigint, Buffer>();
  for (const b of recordBatches(Buffer.concat(result?.recordSlices ?? []))) out.set(b.baseOffset, b.buffer);
  return out;
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
  const described = await source.describeAcls();
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
  const all = (await source.listGroupOffsets()).sort((a, b) => compareStrings(a.groupId, b.groupId));
  for (const group of all) {
    if (!filter.matches(group.groupId)) continue;
    const wanted = group.offsets.filter((o) => scope.has(o.topic));
    if (wanted.length === 0) continue;
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
  return check(
    "group offsets",
    `${counted(groups, "group")}, ${counted(offsets, "committed offset")}`,
    diffs,
  );
}
