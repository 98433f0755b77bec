import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { PartitionLog } from "@cluster-mirror/log";
import { batchesByOffset, hexOf, leaderLog } from "./logs";
import type { Violation } from "./violation";

/** A truncation the operator asked for: a failback or re-add may cut `node`'s partition at `floor` or above. */
export interface TruncationAllowance {
  node: string;
  topic: string;
  partition: number;
  /** Batches starting at or above it may go; below it nothing may. */
  floor: bigint;
  /** What asked for it (for reports). */
  reason: string;
  /** The mirror whose add asked for it (its state ends a `mirroring` allowance); else any mirror's. */
  mirror?: string;
  /**
   * `mirroring`: ends once the partition was seen MIRRORING again; `never`: stays (a source's own loss);
   * `converged`: a copy downstream of a truncated cluster (it mirrors `upstream`) follows that truncation;
   * ends once `after` (the upstream's allowance) ended and this log equals the upstream's from `floor` on.
   */
  expires: "mirroring" | "never" | "converged";
  /** For `converged`: the cluster this node's partition mirrors. */
  upstream?: string;
  /** For `converged`: the allowance of the truncation upstream this one follows. */
  after?: TruncationAllowance;
  /** Set once the partition was seen MIRRORING; the allowance ends at the next observation. */
  seenMirroring?: boolean;
  /**
   * For `mirroring`: the topic was failed over while the add that asked for the truncation was under way
   * (`cancel`); the allowance then also ends once the partition is seen STOPPED, since that add's session
   * is over, and a later add must ask again.
   */
  cancelled?: boolean;
}

interface Tracked {
  hex: string;
  lastOffset: bigint;
}

/**
 * The HW-committed prefix of every partition (internal and compacted topics aside), tracked by the sim: a
 * batch that was below its partition leader's high watermark stays in the log, byte for byte, at its offset.
 * It may disappear only below the log start (retention, DeleteRecords) or through an allowance (a failback's
 * or re-add's truncation at or above the allowance's floor, or a source's unclean election). Checked on
 * every step (`observe`) and at every leader truncation the mirror performs (`onTruncate`), so a wipe that
 * is copied back before the step ends is still seen.
 */
export class CommittedPrefix {
  private readonly tracked = new Map<string, Map<bigint, Tracked>>();
  readonly allowances: TruncationAllowance[] = [];

  /** Lets a truncation of `node`'s partition at or above `floor` happen (see TruncationAllowance). */
  allow(a: TruncationAllowance): TruncationAllowance {
    this.allowances.push(a);
    return a;
  }

  /**
   * `node` deleted `topic` (and maybe created it again under the name): what its partitions held is gone
   * by the operator's will, and the new topic's batches are tracked from now on.
   */
  forget(node: string, topic: string): void {
    for (const k of [...this.tracked.keys()]) if (k.startsWith(`${node}\0${topic}\0`)) this.tracked.delete(k);
  }

  /** Withdraws an allowance (its command was refused and changed nothing). */
  withdraw(a: TruncationAllowance): void {
    const i = this.allowances.indexOf(a);
    if (i >= 0) this.allowances.splice(i, 1);
  }

  /** `node`'s topic was failed over: its adds' `mirroring` allowances end once it is seen STOPPED. */
  cancel(node: string, topic: string): void {
    for (const a of this.allowances) {
      if (a.node === node && a.topic === topic && a.expires === "mirroring") a.cancelled = true;
    }
  }

  /**
   * A new add of `node`'s partition is asked for: the allowances of adds cancelled by a failover end now
   * (that failover returned, so their sessions can truncate nothing more; the new add asks for its own).
   */
  endCancelled(node: string, topic: string, partition: number): void {
    for (const a of [...this.allowances]) {
      if (a.node === node && a.topic === topic && a.partition === partition && a.cancelled) this.withdraw(a);
    }
  }

  /**
   * A leader truncation of `node`'s partition is about to run: to `offset` (`full`: everything, the log
   * restarting at `offset`). Committed batches at or above `offset` it removes need an allowance; with
   * `full`, those below `offset` count as retention (the source no longer has them).
   */
  onTruncate(
    node: string,
    cluster: KafkaCluster,
    topic: string,
    partition: number,
    offset: bigint,
    full: boolean,
  ): Violation[] {
    const entries = this.tracked.get(key(node, topic, partition));
    if (!entries) return [];
    const log = leaderLog(cluster, topic, partition);
    const out: Violation[] = [];
    for (const [base, t] of [...entries]) {
      if (!full && base < offset) continue;
      entries.delete(base);
      if (full && t.lastOffset < offset) continue;
      if (log && t.lastOffset < log.logStartOffset) continue;
      if (this.allowed(node, topic, partition, base)) continue;
      out.push({
        invariant: "committed-prefix",
        message: `${node} ${topic}-${partition}: the committed batch at offset ${base} (below the high watermark) is removed by a ${full ? `full truncation restarting the log at ${offset}` : `truncation to ${offset}`} that no failback, re-add or retention explains (log ${log ? `${log.logStartOffset}..${log.logEndOffset}, HW ${log.highWatermark}` : "offline"})`,
      });
    }
    return out.slice(0, 3);
  }

  /**
   * A mirror is about to append to `node`'s partition leader, at its log end: a tracked (committed) batch at
   * or above that end vanished without a truncation by the mirror (`onTruncate` sees those), so an allowance
   * must explain it. Checked at each append, not only at the step's end, since the mirror copies the same
   * batches back at once while its source still has them: a replica that made a cut it owed again after a
   * restart, over batches it had fetched and committed since, would otherwise go unseen.
   */
  beforeMirrorAppend(node: string, cluster: KafkaCluster, topic: string, partition: number): Violation[] {
    const entries = this.tracked.get(key(node, topic, partition));
    if (!entries || entries.size === 0) return [];
    const log = leaderLog(cluster, topic, partition);
    if (!log) return [];
    const end = log.logEndOffset;
    const out: Violation[] = [];
    for (const [base, t] of [...entries]) {
      if (t.lastOffset < end) continue;
      entries.delete(base);
      if (t.lastOffset < log.logStartOffset || this.allowed(node, topic, partition, base)) continue;
      out.push({
        invariant: "committed-prefix",
        message: `${node} ${topic}-${partition}: the committed batch at offset ${base} (below the high watermark) is gone as the mirror appends at the log end ${end} (log ${log.logStartOffset}..${end}, HW ${log.highWatermark}); no truncation by the mirror, failback, re-add or retention explains it`,
      });
    }
    return out.slice(0, 3);
  }

  /**
   * One step's check on `node`: every tracked batch at or above the log start is still there, unchanged,
   * or an allowance explains it; then every batch now below the HW is tracked. `statesOf(topic, p)` gives
   * the partition's states there now, by mirror (MIRRORING ends `mirroring` allowances; STOPPED ends
   * cancelled ones).
   */
  observe(
    node: string,
    cluster: KafkaCluster,
    compacted: (topic: string) => boolean,
    statesOf: (topic: string, partition: number) => ReadonlyArray<{ mirror: string; state: string }>,
    logOf: (node: string, topic: string, partition: number) => PartitionLog | undefined = () => undefined,
  ): Violation[] {
    const out: Violation[] = [];
    for (const topic of [...cluster.controller.image.topicIdsByName.keys()].sort()) {
      if (topic.startsWith("__") || compacted(topic)) continue;
      const meta = cluster.controller.image.topic(topic);
      for (const p of meta?.partitions ?? []) {
        const log = leaderLog(cluster, topic, p.partition);
        if (!log) continue;
        const k = key(node, topic, p.partition);
        let entries = this.tracked.get(k);
        if (!entries) {
          entries = new Map();
          this.tracked.set(k, entries);
        }
        const now = new Map<bigint, Tracked>();
        for (const b of log.batches()) {
          if (b.lastOffset < log.logStartOffset) continue;
          // Hex only what is compared or newly committed: most batches of a long log are neither.
          const wanted = entries.has(b.baseOffset) || b.lastOffset < log.highWatermark;
          now.set(b.baseOffset, { hex: wanted ? hexOf(b) : "", lastOffset: b.lastOffset });
        }
        let reported = 0;
        for (const [base, t] of [...entries]) {
          if (t.lastOffset < log.logStartOffset) {
            entries.delete(base);
            continue;
          }
          const cur = now.get(base);
          if (cur && cur.hex === t.hex) continue;
          entries.delete(base);
          if (this.allowed(node, topic, p.partition, base)) continue;
          if (reported++ >= 3) continue;
          out.push({
            invariant: "committed-prefix",
            message: `${node} ${topic}-${p.partition}: the batch at offset ${base}, once below the high watermark, is ${cur ? "different" : "gone"} (log ${log.logStartOffset}..${log.logEndOffset}, HW ${log.highWatermark}, leader ${p.leader}); no failback, re-add or retention explains it`,
          });
        }
        for (const [base, t] of now) {
          if (!entries.has(base) && t.lastOffset < log.highWatermark) entries.set(base, t);
        }
      }
    }
    for (const a of [...this.allowances]) {
      if (a.node !== node || a.expires === "never") continue;
      const ended =
        a.expires === "mirroring"
          ? statesOf(a.topic, a.partition).some(
              ({ mirror, state }) =>
                (a.mirror === undefined || a.mirror === mirror) &&
                (state === "MIRRORING" || (a.cancelled === true && state === "STOPPED")),
            )
          : !this.allowances.includes(a.after!) &&
            sameFrom(logOf(node, a.topic, a.partition), logOf(a.upstream!, a.topic, a.partition), a.floor);
      if (!ended) continue;
      if (a.seenMirroring) this.withdraw(a);
      else a.seenMirroring = true;
    }
    return out;
  }

  private allowed(node: string, topic: string, partition: number, offset: bigint): boolean {
    return this.allowances.some(
      (a) => a.node === node && a.topic === topic && a.partition === partition && offset >= a.floor,
    );
  }
}

/** True when both logs exist, end at the same offset and hold the same batches from `floor` on. */
function sameFrom(ours: PartitionLog | undefined, theirs: PartitionLog | undefined, floor: bigint): boolean {
  if (!ours || !theirs || ours.logEndOffset !== theirs.logEndOffset) return false;
  const want = batchesByOffset(theirs);
  for (const b of ours.batches()) {
    if (b.lastOffset < floor) continue;
    const t = want.get(b.baseOffset);
    if (!t || hexOf(t) !== hexOf(b)) return false;
  }
  return true;
}

function key(node: string, topic: string, partition: number): string {
  return `${node}\0${topic}\0${partition}`;
}
