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
    // write(2) may write less than asked (and say how much): a short write renamed into place would be a
    // torn file that the next start refuses as corrupt, after the caller was told it was stored.
    const bytes = Buffer.from(text, "utf8");
    for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done);
    if (fsync) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  if (fsync) syncDirectory(path.dirname(file));
}
