import type { MirrorVerification } from "@cluster-mirror/mirror";
import { connectNode, type NodeConnectionFlags } from "../client/node-token";
import { OperationError } from "./cli-errors";
import { mirrorPath } from "./mirror-path";
import { formatVerifyTable } from "./mirror-tables";

/** Flags of `cluster-mirror verify`. */
export interface VerifyFlags extends NodeConnectionFlags {
  mirror: string;
  cluster?: string;
  json?: boolean;
}

/**
 * `cluster-mirror verify --mirror NAME`: asks the node to compare the mirror's topics with its source and
 * prints the table (or JSON); throws OperationError (exit 1) when any check differs or the mirror has no
 * topic to compare, so the exit status is 0 only when source and destination agree on something.
 */
export async function runVerify(flags: VerifyFlags, out: (text: string) => void): Promise<void> {
  const client = connectNode(flags);
  const v = await client.get<MirrorVerification>(`${mirrorPath(flags.mirror)}/verify`, {
    cluster: flags.cluster,
  });
  out(flags.json ? `${JSON.stringify(v, null, 2)}\n` : formatVerifyTable(v));
  if (!v.ok) throw new OperationError(verifyFailureMessage(v));
  // Agreeing on nothing is not a clean bill: a script checking for data loss must not read it as one.
  if (v.topics.length === 0) throw new OperationError(nothingComparedMessage(v.mirror));
}

/** Checks the periodic metadata sync copies (not the fetchers): they lag by up to one refresh interval. */
const SYNCED_CHECKS = new Set(["configs", "acls", "group offsets"]);

/**
 * The error line of a verify that found differences: which checks differ, and the likely reason for each
 * kind, so a mirror that is merely behind is not mistaken for a broken one.
 */
export function verifyFailureMessage(v: Pick<MirrorVerification, "mirror" | "checks">): string {
  const failed = v.checks.filter((c) => !c.ok && !c.notCompared).map((c) => c.check);
  const unknown = v.checks.filter((c) => c.notCompared).map((c) => c.check);
  const why: string[] = [];
  if (failed.includes("offsets")) {
    why.push("a mirror still catching up differs in offsets until its lag is 0");
  }
  // Batches are compared only below the destination's high watermark: no lag explains a difference there.
  if (failed.includes("batches")) {
    why.push(
      "differing batches are not lag: the copy holds other records than its source at those offsets (for a compacted topic, another latest record of a key); find out why before a failover",
    );
  }
  if (failed.includes("topic ids")) {
    why.push(
      "a topic whose id differs was deleted and created again on the source: its copy is of the old topic",
    );
  }
  if (failed.some((c) => SYNCED_CHECKS.has(c))) {
    why.push(
      "configs, ACLs and group offsets are copied by the metadata sync, every mirror.metadata.refresh.interval.ms (30000 by default): run verify again after one interval",
    );
  }
  // A check the source refused is no difference found: say it was not compared, and not why it would lag.
  const notCompared = unknown.length > 0 ? `could not compare ${unknown.join(", ")}` : "";
  if (failed.length === 0) return `mirror ${v.mirror}: ${notCompared}; see the table above for what to do`;
  const differs = `mirror ${v.mirror} differs from its source in ${failed.join(", ")}`;
  return `${differs}${notCompared ? ` and ${notCompared}` : ""}; see the table above (${why.join("; ")})`;
}

/** The error line of a verify that had no topic to compare. */
export function nothingComparedMessage(mirror: string): string {
  return `mirror ${mirror} has no mirrored or paused topics, so nothing was compared; a topic failed over (--remove) is no longer part of the mirror: verify before the failover, or add topics with kafka-mirrors --add`;
}
