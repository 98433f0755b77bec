import type { KafkaCluster } from "@cluster-mirror/cluster";
import { batchHex, leaderLog, partitionsOf, tpName } from "./log-inspect";

/** One verification line: what was compared, whether it matched, and the numbers. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** Topic configs that legitimately differ between a mirror and its source (the mirror's own marker). */
const LOCAL_CONFIGS = new Set(["mirror.name"]);

/**
 * Compares two clusters over `topics` and `groups`, computing every number: batches byte-identical per
 * partition, log start/end offsets and high watermarks, dynamic topic configs (minus `mirror.name`), ACLs
 * (all bindings), and committed offsets of the groups on those topics.
 */
export function verifyClusters(
  a: KafkaCluster,
  b: KafkaCluster,
  topics: readonly string[],
  groups: readonly string[],
): Check[] {
  const partsA = partitionsOf(a, topics);
  const partsB = partitionsOf(b, topics);
  const checks: Check[] = [];

  let identical = 0;
  let batches = 0;
  const differing: string[] = [];
  for (const tp of partsA) {
    const ha = batchHex(a, tp);
    const hb = partsB.some((x) => tpName(x) === tpName(tp)) ? batchHex(b, tp) : [];
    batches += ha.length;
    if (ha.length === hb.length && ha.every((h, i) => h === hb[i])) identical++;
    else differing.push(`${tpName(tp)} (${ha.length} vs ${hb.length} batches)`);
  }
  checks.push({
    name: "batches byte-identical",
    ok: identical === partsA.length && partsA.length === partsB.length && partsA.length > 0,
    detail: `${identical}/${partsA.length} partitions, ${batches} batches${differing.length ? `; differ: ${differing.join(", ")}` : ""}`,
  });

  let sameOffsets = 0;
  let records = 0n;
  const offsetDiffs: string[] = [];
  for (const tp of partsA) {
    const la = leaderLog(a, tp);
    const lb = partsB.some((x) => tpName(x) === tpName(tp)) ? leaderLog(b, tp) : undefined;
    records += la.logEndOffset - la.logStartOffset;
    const same =
      lb !== undefined &&
      la.logStartOffset === lb.logStartOffset &&
      la.logEndOffset === lb.logEndOffset &&
      la.highWatermark === lb.highWatermark;
    if (same) sameOffsets++;
    else offsetDiffs.push(`${tpName(tp)} ${la.logEndOffset} vs ${lb?.logEndOffset ?? "missing"}`);
  }
  checks.push({
    name: "offsets equal",
    ok: sameOffsets === partsA.length && partsA.length > 0,
    detail: `${sameOffsets}/${partsA.length} partitions (log start, log end, high watermark; ${records} offsets)${offsetDiffs.length ? `; differ: ${offsetDiffs.join(", ")}` : ""}`,
  });

  let sameConfigs = 0;
  let configCount = 0;
  const configDiffs: string[] = [];
  for (const topic of topics) {
    const ca = dynamicConfigs(a, topic);
    const cb = dynamicConfigs(b, topic);
    configCount += ca.size;
    const diff = [...new Set([...ca.keys(), ...cb.keys()])].filter((k) => ca.get(k) !== cb.get(k));
    if (diff.length === 0) sameConfigs++;
    else configDiffs.push(`${topic}: ${diff.join(", ")}`);
  }
  checks.push({
    name: "topic configs equal",
    ok: sameConfigs === topics.length,
    detail: `${sameConfigs}/${topics.length} topics, ${configCount} dynamic configs${configDiffs.length ? `; differ: ${configDiffs.join("; ")}` : ""}`,
  });

  const aclsA = aclKeys(a);
  const aclsB = aclKeys(b);
  const onlyA = [...aclsA].filter((k) => !aclsB.has(k)).length;
  const onlyB = [...aclsB].filter((k) => !aclsA.has(k)).length;
  checks.push({
    name: "ACLs equal",
    ok: onlyA === 0 && onlyB === 0 && aclsA.size > 0,
    detail: `${aclsA.size} vs ${aclsB.size} bindings${onlyA + onlyB > 0 ? `; ${onlyA} only on one side, ${onlyB} only on the other` : ""}`,
  });

  let sameGroupOffsets = 0;
  let offsetCount = 0;
  const groupDiffs: string[] = [];
  for (const group of groups) {
    const oa = groupOffsets(a, group, topics);
    const ob = groupOffsets(b, group, topics);
    offsetCount += oa.size;
    const diff = [...new Set([...oa.keys(), ...ob.keys()])].filter((k) => oa.get(k) !== ob.get(k));
    if (diff.length === 0 && oa.size > 0) sameGroupOffsets++;
    else groupDiffs.push(`${group}: ${diff.length} partitions differ`);
  }
  checks.push({
    name: "group offsets equal",
    ok: sameGroupOffsets === groups.length,
    detail: `${sameGroupOffsets}/${groups.length} groups, ${offsetCount} committed offsets${groupDiffs.length ? `; ${groupDiffs.join("; ")}` : ""}`,
  });
  return checks;
}

function dynamicConfigs(cluster: KafkaCluster, topic: string): Map<string, string> {
  const configs = cluster.controller.image.topic(topic)?.configs ?? new Map<string, string>();
  return new Map([...configs].filter(([k]) => !LOCAL_CONFIGS.has(k)));
}

function aclKeys(cluster: KafkaCluster): Set<string> {
  return new Set(
    cluster.authorizer
      .describeAcls()
      .map((b) =>
        [
          b.resourceType,
          b.patternType,
          b.resourceName,
          b.principal,
          b.host,
          b.operation,
          b.permissionType,
        ].join(" "),
      ),
  );
}

function groupOffsets(cluster: KafkaCluster, group: string, topics: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of cluster.groups.fetchOffsets(group)) {
    if (topics.some((t) => k.startsWith(`${t}:`))) out.set(k, v.offset.toString());
  }
  return out;
}
