import * as fs from "node:fs";
import * as path from "node:path";
import { syncDirectory } from "@cluster-mirror/cluster";

/**
 * Replaces `file` with `text` atomically (temp file, fsync, rename, then the directory fsynced), so a crash
 * leaves either the old or the new file, and a power loss cannot bring the old one back.
 */
export function writeFileAtomically(file: string, text: string, fsync: boolean): void {
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, "w");
  try {
    fs.writeSync(fd, text);
    if (fsync) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  if (fsync) syncDirectory(path.dirname(file));
}
