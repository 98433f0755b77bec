import * as fs from "node:fs";
import type { CommittedOffset } from "@cluster-mirror/cluster";
import { writeFileAtomically } from "./atomic-file";

/** File name of the persisted committed offsets inside a cluster's data dir. */
export const GROUP_OFFSETS_FILE = "group-offsets.json";

/** Committed offsets of every group, by group id then `offsetKey` (topic-partition). */
export type GroupOffsetsSnapshot = Map<string, Map<string, CommittedOffset>>;

interface StoredOffset {
  offset: string;
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number;
}

/** Reads the committed offsets file; missing file: no groups. */
export function readGroupOffsets(file: string): GroupOffsetsSnapshot {
  const snapshot: GroupOffsetsSnapshot = new Map();
  if (!fs.existsSync(file)) return snapshot;
  let stored: Record<string, Record<string, StoredOffset>>;
  try {
    stored = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file} is corrupt (${String(error)}); delete it to start without committed offsets`);
  }
  for (const [groupId, offsets] of Object.entries(stored)) {
    const map = new Map<string, CommittedOffset>();
    for (const [key, o] of Object.entries(offsets)) map.set(key, { ...o, offset: BigInt(o.offset) });
    snapshot.set(groupId, map);
  }
  return snapshot;
}

/** Writes the committed offsets of every group atomically (see `writeFileAtomically`). */
export function writeGroupOffsets(file: string, snapshot: GroupOffsetsSnapshot, fsync: boolean): void {
  const stored: Record<string, Record<string, StoredOffset>> = {};
  for (const [groupId, offsets] of snapshot) {
    if (offsets.size === 0) continue;
    const group: Record<string, StoredOffset> = {};
    for (const [key, o] of offsets) group[key] = { ...o, offset: o.offset.toString() };
    stored[groupId] = group;
  }
  writeFileAtomically(file, JSON.stringify(stored), fsync);
}
