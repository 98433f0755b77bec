import type { MetadataImage, Uuid } from "@cluster-mirror/cluster";
import { PAUSED_SUFFIX, REMOVED_SUFFIX } from "../admin/mirror-config";

/** What a topic's `mirror.name` asks for: mirror it, keep it paused, or remove it (fail over). */
export type DesiredMirrorState = "ACTIVE" | "PAUSED" | "REMOVED";

/** The topic config that marks a mirror topic (KIP-1279). */
export const MIRROR_NAME_CONFIG = "mirror.name";

/** Splits a `mirror.name` value into the mirror and the state its suffix asks for; undefined when unset. */
export function parseMirrorNameConfig(
  value: string | undefined,
): { mirror: string; desired: DesiredMirrorState } | undefined {
  if (value === undefined || value === "") return undefined;
  if (value.endsWith(PAUSED_SUFFIX))
    return { mirror: value.slice(0, -PAUSED_SUFFIX.length), desired: "PAUSED" };
  if (value.endsWith(REMOVED_SUFFIX)) {
    return { mirror: value.slice(0, -REMOVED_SUFFIX.length), desired: "REMOVED" };
  }
  return { mirror: value, desired: "ACTIVE" };
}

/** The `mirror.name` value that asks for `desired`. */
export function mirrorNameValue(mirror: string, desired: DesiredMirrorState): string {
  if (desired === "PAUSED") return mirror + PAUSED_SUFFIX;
  if (desired === "REMOVED") return mirror + REMOVED_SUFFIX;
  return mirror;
}

/** A destination topic that belongs (or belonged, when REMOVED) to a mirror. */
export interface MirrorTopic {
  name: string;
  topicId: Uuid;
  partitionCount: number;
  mirror: string;
  desired: DesiredMirrorState;
  configs: ReadonlyMap<string, string>;
}

/** The destination's mirror topics (of one mirror, or all), sorted by name. */
export function mirrorTopics(image: MetadataImage, mirror?: string): MirrorTopic[] {
  const result: MirrorTopic[] = [];
  for (const topic of image.topicsById.values()) {
    const parsed = parseMirrorNameConfig(topic.configs.get(MIRROR_NAME_CONFIG));
    if (!parsed || (mirror !== undefined && parsed.mirror !== mirror)) continue;
    result.push({
      name: topic.name,
      topicId: topic.topicId,
      partitionCount: topic.partitions.length,
      mirror: parsed.mirror,
      desired: parsed.desired,
      configs: topic.configs,
    });
  }
  return result.sort((a, b) => compareStrings(a.name, b.name));
}

/** Code-point order, so sorting never depends on the locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
