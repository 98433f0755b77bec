import type { PartitionMetadata } from "./metadata-image";

/** The topic config that makes a topic a mirror topic (KIP-1279); its `.removed` suffix asks for a failover. */
export const MIRROR_NAME_CONFIG = "mirror.name";

const REMOVED_SUFFIX = ".removed";

/**
 * Whether a partition refuses produces with READ_ONLY_TOPIC, from durable metadata only, so every replica
 * answers the same after a restart or a leader change. The flag the mirror engine keeps in the metadata
 * log decides; a partition it never flagged is read-only while its topic has any `mirror.name` (the
 * topic was created as a mirror). A `.removed` suffix does not make it writable by itself: only the
 * engine's STOPPED step does, by clearing the flag.
 */
export function isMirrorReadOnly(
  partition: Pick<PartitionMetadata, "mirrorReadOnly">,
  mirrorName: string | undefined,
): boolean {
  return partition.mirrorReadOnly ?? mirrorName !== undefined;
}

/**
 * True when a `mirror.name` change makes a topic a mirror (again): set where it was unset or removed, to a
 * value that does not ask for a removal. From then on its partitions are read-only, before the engine
 * has even heard of the change (a failback's re-add).
 */
export function becomesMirror(before: string | undefined, after: string | undefined): boolean {
  return asksForMirroring(after) && !asksForMirroring(before);
}

/** Whether a `mirror.name` value asks for mirroring (set, mirroring or paused, not `.removed`). */
export function asksForMirroring(mirrorName: string | undefined): boolean {
  return mirrorName !== undefined && !mirrorName.endsWith(REMOVED_SUFFIX);
}
