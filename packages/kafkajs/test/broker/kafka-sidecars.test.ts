import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";

/**
 * Our partition directories hold Kafka's sidecar files (`.index`, `.timeindex`, `.txnindex`,
 * `.snapshot`): Kafka's own DumpLogSegments reads them, and what it prints is what Kafka's rules derive
 * from the stored batches (computed here independently of the storage code).
 */

const ROOT = path.join(import.meta.dirname, "..", "..", "..", "..");
const FIXTURE = path.join(ROOT, "packages", "log", "test", "fixtures", "kafka-sidecars-dir.ts");
const INDEX_INTERVAL_BYTES = 4096;
const ABORT = 0;

interface StoredBatch {
  baseOffset: string;
  lastOffset: string;
  maxTimestamp: string;
  sizeInBytes: number;
  producerId: string;
  producerEpoch: number;
  baseSequence: number;
  lastSequence: number;
  isTransactional: boolean;
  control?: number;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "kafka-sidecars-"));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** Writes the partition directory (a child process runs the log package's fixture) and returns its batches. */
function writeDir(): { dir: string; logEndOffset: bigint; batches: StoredBatch[] } {
  const out = execFileSync(process.execPath, ["--import", "tsx", FIXTURE, work], {
    cwd: ROOT,
    encoding: "utf8",
  });
  const report = JSON.parse(out.trim().split("\n").at(-1)!);
  return { dir: report.dir, logEndOffset: BigInt(report.logEndOffset), batches: report.batches };
}

/** Runs Kafka's DumpLogSegments on files of `dir`; returns what it printed (stdout and stderr). */
function dump(dir: string, files: string[], ...flags: string[]): string {
  const args = ["-Xmx256m", "-cp", `${inject("kafkaLibs")}${path.sep}*`, "kafka.tools.DumpLogSegments"];
  const paths = files.map((f) => path.join(dir, f)).join(",");
  const out = execFileSync("java", [...args, ...flags, "--files", paths], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return out;
}

/** The batches of each segment with their positions, by segment base offset. */
function bySegment(bases: bigint[], batches: StoredBatch[]) {
  const out = new Map<bigint, (StoredBatch & { position: number })[]>(bases.map((b) => [b, []]));
  for (const b of batches) {
    const base = bases.filter((s) => s <= BigInt(b.baseOffset)).at(-1)!;
    const list = out.get(base)!;
    const last = list.at(-1);
    list.push({ ...b, position: last ? last.position + last.sizeInBytes : 0 });
  }
  return out;
}

/** Kafka's LogSegment.recover rule for a segment's offset and time index (plus the closing entry once rolled). */
function expectedIndexes(batches: (StoredBatch & { position: number })[], rolled: boolean) {
  const offsets: string[] = [];
  const times: string[] = [];
  let lastIndexed = 0;
  let maxTs = -1n;
  let offsetOfMax = 0n;
  let lastTimeTs = -1n;
  const maybeTime = () => {
    if (maxTs > lastTimeTs) {
      times.push(`timestamp: ${maxTs} offset: ${offsetOfMax}`);
      lastTimeTs = maxTs;
    }
  };
  for (const b of batches) {
    if (BigInt(b.maxTimestamp) > maxTs) {
      maxTs = BigInt(b.maxTimestamp);
      offsetOfMax = BigInt(b.lastOffset);
    }
    if (b.position - lastIndexed > INDEX_INTERVAL_BYTES) {
      offsets.push(`offset: ${b.lastOffset} position: ${b.position}`);
      lastIndexed = b.position;
      maybeTime();
    }
  }
  if (rolled) maybeTime();
  return { offsets, times };
}

/** Replays producer state as Kafka does: aborted transactions (with the LSO after each) and the producers. */
function replayProducers(batches: StoredBatch[]) {
  const open = new Map<string, bigint>();
  const aborted: { producerId: string; firstOffset: bigint; lastOffset: bigint; lso: bigint }[] = [];
  const producers = new Map<string, { epoch: number; last?: StoredBatch; lastTimestamp: string }>();
  for (const b of batches) {
    if (b.producerId === "-1") continue;
    const p = producers.get(b.producerId) ?? { epoch: b.producerEpoch, lastTimestamp: b.maxTimestamp };
    p.lastTimestamp = b.maxTimestamp;
    producers.set(b.producerId, p);
    if (b.control !== undefined) {
      const first = open.get(b.producerId);
      if (first === undefined) continue;
      open.delete(b.producerId);
      if (b.control === ABORT) {
        const others = [...open.values()].sort((x, y) => (x < y ? -1 : 1));
        const marker = BigInt(b.baseOffset);
        aborted.push({
          producerId: b.producerId,
          firstOffset: first,
          lastOffset: marker,
          lso: others[0] ?? marker + 1n,
        });
      }
      continue;
    }
    p.last = b;
    if (b.isTransactional && !open.has(b.producerId)) open.set(b.producerId, BigInt(b.baseOffset));
  }
  return { aborted, open, producers };
}

describe("Kafka's DumpLogSegments reads our sidecar files", () => {
  const { dir, logEndOffset, batches } = writeDir();
  const names = fs.readdirSync(dir).sort();
  const bases = names.filter((n) => n.endsWith(".log")).map((n) => BigInt(n.slice(0, 20)));
  const segments = bySegment(bases, batches);
  const name = (base: bigint, suffix: string) => `${base.toString().padStart(20, "0")}${suffix}`;

  it("writes the fixture's layout: several segments, each with its indexes", () => {
    expect(bases.length).toBeGreaterThanOrEqual(3);
    for (const base of bases.slice(0, -1)) {
      expect(names).toContain(name(base, ".index"));
      expect(names).toContain(name(base, ".timeindex"));
    }
  });

  it("verifies every offset and time index entry against the segments (--verify-index-only)", () => {
    const files = names.filter((n) => n.endsWith(".index") || n.endsWith(".timeindex"));
    const out = dump(dir, files, "--verify-index-only");
    for (const f of files) expect(out).toContain(`Dumping ${path.join(dir, f)}`);
    expect(out).not.toMatch(/Mismatches|mismatch|not found|out of order|Exception|corrupt/i);
  });

  it("holds the entries Kafka's recovery rule derives from each segment's batches", () => {
    const files = names.filter((n) => n.endsWith(".index") || n.endsWith(".timeindex"));
    const out = dump(dir, files);
    const sections = new Map(
      out
        .split(/^Dumping /m)
        .slice(1)
        .map((s) => {
          const [file, ...lines] = s.split("\n");
          return [path.basename(file!), lines.filter((l) => /^(offset|timestamp):/.test(l))] as const;
        }),
    );
    let entries = 0;
    for (const [i, base] of bases.entries()) {
      const expected = expectedIndexes(segments.get(base)!, i < bases.length - 1);
      expect(sections.get(name(base, ".index")) ?? [], `offset index of ${base}`).toEqual(expected.offsets);
      expect(sections.get(name(base, ".timeindex")) ?? [], `time index of ${base}`).toEqual(expected.times);
      entries += expected.offsets.length;
    }
    expect(entries).toBeGreaterThan(3);
  });

  it("files each aborted transaction, with its LSO, in the .txnindex of the segment holding its marker", () => {
    const { aborted } = replayProducers(batches);
    expect(aborted.length).toBeGreaterThanOrEqual(2);
    expect(aborted.some((t) => t.lso !== t.lastOffset + 1n)).toBe(true); // one aborted while another was open
    const files = names.filter((n) => n.endsWith(".txnindex"));
    const out = dump(dir, files);
    const printed = out.split("\n").filter((l) => l.startsWith("version:"));
    expect(printed).toEqual(
      aborted.map(
        (t) =>
          `version: 0 producerId: ${t.producerId} firstOffset: ${t.firstOffset} lastOffset: ${t.lastOffset} lastStableOffset: ${t.lso}`,
      ),
    );
    for (const t of aborted) {
      const base = bases.filter((b) => b <= t.lastOffset).at(-1)!;
      expect(names).toContain(name(base, ".txnindex"));
    }
  });

  it("snapshots the producer state at every rolled segment and at the log end, as Kafka reads it", () => {
    const snapshots = names.filter((n) => n.endsWith(".snapshot")).map((n) => BigInt(n.slice(0, 20)));
    expect(snapshots.at(-1)).toBe(logEndOffset);
    for (const offset of snapshots.slice(0, -1)) expect(bases).toContain(offset);
    const out = dump(dir, [name(logEndOffset, ".snapshot")]);
    const { producers, open } = replayProducers(batches);
    const printed = out.split("\n").filter((l) => l.startsWith("producerId:"));
    const expected = [...producers.entries()]
      .sort(([a], [b]) => (BigInt(a) < BigInt(b) ? -1 : 1))
      .map(([pid, p]) => {
        const txn = open.get(pid);
        const last = p.last!;
        return (
          `producerId: ${pid} producerEpoch: ${p.epoch} coordinatorEpoch: -1 ` +
          `currentTxnFirstOffset: ${txn === undefined ? "OptionalLong.empty" : `OptionalLong[${txn}]`} ` +
          `lastTimestamp: ${p.lastTimestamp} firstSequence: ${last.baseSequence} lastSequence: ${last.lastSequence} ` +
          `lastOffset: ${last.lastOffset} offsetDelta: ${last.lastSequence - last.baseSequence} timestamp: ${p.lastTimestamp}`
        );
      });
    expect(printed).toEqual(expected);
    expect(out).not.toMatch(/corrupt|CRC/i);
  });
});
