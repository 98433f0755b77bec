import type { MirrorListing } from "@cluster-mirror/mirror";

/**
 * The lines `kafka-mirrors` prints for actions whose answer carries no message of its own. The demo prints
 * the same lines beside the commands it stands for, so they live in one place.
 */
export const mirrorMessages = {
  /** `--create`. */
  created: (m: MirrorListing): string =>
    `Created mirror ${m.name} from ${m.sourceBootstrap} (source cluster id ${m.sourceClusterId})`,
  /** `--alter`: the keys set and deleted (values left out: some are secrets). */
  altered: (name: string, set: readonly string[], deleted: readonly string[]): string =>
    `Altered mirror ${name}: ${[
      ...(set.length > 0 ? [`set ${set.join(", ")}`] : []),
      ...(deleted.length > 0 ? [`deleted ${deleted.join(", ")}`] : []),
    ].join("; ")}`,
  /**
   * `--alter` that changed the topic patterns: the mirror's topics they no longer match, still mirrored
   * (patterns only choose which source topics are added).
   */
  stillMirrored: (name: string, topics: readonly string[]): string =>
    `Note: ${topics.length} topic(s) of mirror ${name} no longer match its topics.include/topics.exclude but are still mirrored: [${topics.join(", ")}]. Patterns only choose which source topics are added; to stop mirroring these, fail them over (--remove --mirror ${name} --topic REGEX) or pause them (--pause).`,
  /** `--delete`. */
  deleted: (name: string): string => `Deleted mirror ${name}`,
} as const;
