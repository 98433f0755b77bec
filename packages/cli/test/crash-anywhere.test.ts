import * as fs from "node:fs";
import * as path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { SeededRandom } from "@cluster-mirror/cluster";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  authHeader,
  CLI_TEST_TIMEOUT_MS,
  describeRows,
  exited,
  getJson,
  killAll,
  mirrors,
  type NodeProcess,
  startNode,
  tempDir,
  waitFor,
  waitForMirror,
} from "./cli-harness";

afterEach(() => killAll());

/**
 * Kill -9 anywhere in a failover, lose nothing. One node (a destination mirroring an embedded source
 * `primary`) is set up once: idempotent records, a committed, an aborted and an open transaction, then a
 * commit behind the open one; the mirror catches up, and the node is killed in that steady state. Its data
 * dir is the template: each kill point copies it, starts a node on the copy, asks for the failover through
 * the routes `kafka-mirrors --remove` and `--promote` call, SIGKILLs the node a delay after the request
 * (drawn from the kill point's seed), restarts it on the same dir, sometimes kills it a second time while it
 * recovers, asks again if the first request got no answer (as an operator would), and checks absolute
 * oracles once every partition is STOPPED.
 *
 * The barrier (what must be on the destination whatever the kills hit): the template's source log, which
 * the caught-up mirror acknowledged as copied (lag 0 against the source's high watermark, which was its log
 * end: every record the source acknowledged). `--remove` runs with a writer on the source until the kill,
 * as an unplanned failover does: what the mirror copied of those writes may be kept or not, but only as a
 * prefix of the source's log, byte for byte. `--promote` follows a burst of writes and is a planned switch
 * (the writer stopped first): it must keep every record the source acknowledged.
 *
 * Set CRASH_ANYWHERE_SEED to move every kill point (the seeds and delays are in the test names).
 */

/** Partitions of the mirrored topic (CRASH_ANYWHERE_PARTITIONS for a soak: more partitions, longer STOPPING). */
const PARTITIONS = Number(process.env.CRASH_ANYWHERE_PARTITIONS ?? 4);
/** Records of the transaction left open: two per partition, so it is open on every one. */
const OPEN_RECORDS = 2 * PARTITIONS;
/** Kill points: the first half ask for --remove, the rest for --promote (CRASH_ANYWHERE_POINTS for a soak). */
const KILL_POINTS = Number(process.env.CRASH_ANYWHERE_POINTS ?? 6);
/**
 * The kill delays of each path span [0, KILL_SPAN_MS) after its request, one stratum per kill point (half
 * the points each). Measured on the loaded 2-core machine: --remove answers after about 100 ms, its
 * partitions are STOPPING until about 400 ms; --promote catches up for about 300 ms, then fails over and
 * answers once STOPPED, after about 800 ms.
 */
const KILL_SPAN_MS = { remove: 560, promote: 1000 } as const;
/** A second kill, when a point has one, lands within this long after the restarted node says it started. */
const RECOVERY_KILL_SPAN_MS = 300;
const BASE_SEED = Number(process.env.CRASH_ANYWHERE_SEED ?? 1279);
/** Bound on each wait for the failover to finish: the condition is what is waited for. */
const BOUND_MS = 60_000;

interface BatchView {
  baseOffset: string;
  lastOffset: string;
  partitionLeaderEpoch: number;
  producerId: string;
  producerEpoch: number;
  isControl: boolean;
  controlTypeName: string | null;
  crc: number;
  crcValid: boolean;
  [field: string]: unknown;
}

interface LogView {
  logStartOffset: string;
  logEndOffset: string;
  highWatermark: string;
  lastStableOffset: string;
  batches: BatchView[];
  producers: { producerId: string; producerEpoch: number; currentTxnStartOffset: string | null }[];
}

interface Consumed {
  partition: number;
  offset: string;
  value: string | null;
}

/** What a kill point does: SIGKILL `killAfterMs` after the request, and maybe again while recovering. */
interface KillPlan {
  seed: number;
  /** The failover asked for: `--remove` (unplanned) or `--promote` (planned: catch up, then remove). */
  path: "remove" | "promote";
  killAfterMs: number;
  recoveryKillAfterMs: number | null;
}

function planOf(point: number): KillPlan {
  const seed = BASE_SEED * 1000 + point;
  const random = new SeededRandom(seed);
  const removes = Math.ceil(KILL_POINTS / 2);
  const path = point < removes ? "remove" : "promote";
  const [index, strata] = path === "remove" ? [point, removes] : [point - removes, KILL_POINTS - removes];
  const stratum = KILL_SPAN_MS[path] / strata;
  const killAfterMs = Math.floor(index * stratum + random.next() * stratum);
  const recoveryKillAfterMs = random.next() < 0.5 ? random.nextInt(RECOVERY_KILL_SPAN_MS) : null;
  return { seed, path, killAfterMs, recoveryKillAfterMs };
}

function describePlan(plan: KillPlan): string {
  const second =
    plan.recoveryKillAfterMs === null
      ? ", again once the failover is over"
      : `, again ${plan.recoveryKillAfterMs} ms after the restarted node started`;
  return `seed ${plan.seed}: SIGKILL ${plan.killAfterMs} ms after --${plan.path}${second}`;
}

async function postJson<T>(port: number, route: string, body: unknown): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method: "POST",
    headers: { ...authHeader(port), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${route}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function logOf(port: number, cluster: "primary" | null, partition: number): Promise<LogView> {
  const q = `${cluster ? `cluster=${cluster}&` : ""}topic=events&partition=${partition}`;
  return getJson<LogView>(port, `/v1/log?${q}`);
}

async function logsOf(port: number, cluster: "primary" | null): Promise<LogView[]> {
  const out: LogView[] = [];
  for (let p = 0; p < PARTITIONS; p++) out.push(await logOf(port, cluster, p));
  return out;
}

async function produce(port: number, body: Record<string, unknown>) {
  return postJson<{ records: { partition: number; offset: string }[]; transaction: string | null }>(
    port,
    "/v1/produce",
    { topic: "events", ...body },
  );
}

async function consume(
  port: number,
  cluster: "primary" | null,
  isolation: string,
  maxMessages: number,
): Promise<Consumed[]> {
  const { messages } = await postJson<{ messages: Consumed[] }>(port, "/v1/consume", {
    ...(cluster ? { cluster } : {}),
    topic: "events",
    fromBeginning: true,
    isolation,
    maxMessages,
    // It returns once it has maxMessages: the timeout only ends a read that misses some.
    timeoutMs: 20_000,
  });
  return sortByOffset(messages);
}

function sortByOffset(messages: readonly Consumed[]): Consumed[] {
  return [...messages]
    .map(({ partition, offset, value }) => ({ partition, offset, value }))
    .sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
}

async function sigkill(node: NodeProcess): Promise<void> {
  node.child.kill("SIGKILL");
  await exited(node.child);
}

/** The template: its dir (of a node killed while mirroring, caught up) and the source as the mirror saw it. */
interface Template {
  dir: string;
  /** The source's log per partition at the barrier. */
  source: LogView[];
  /** Every record on the source, read_uncommitted. */
  records: Consumed[];
}

let template: Template;

/** Records the workload wrote. */
const WORKLOAD_RECORDS = 40 + 40 + 6 + 6 + 10 + OPEN_RECORDS + 6;

beforeAll(async () => {
  const dir = tempDir("cm-crash-anywhere-template");
  const node = await startNode(dir);
  const port = node.port;
  await postJson(port, "/v1/topics", { cluster: "primary", topic: "events", partitions: PARTITIONS });
  const primary = { cluster: "primary" };
  await produce(port, { ...primary, count: 40, value: "i0" });
  await produce(port, { ...primary, count: 40, value: "i1" });
  expect(
    (await produce(port, { ...primary, count: 6, value: "c", transactionalId: "committed" })).transaction,
  ).toBe("committed");
  expect(
    (await produce(port, { ...primary, count: 6, value: "a", transactionalId: "aborted", abort: true }))
      .transaction,
  ).toBe("aborted");
  await produce(port, { ...primary, count: 10, value: "i2" });
  const open = await produce(port, {
    ...primary,
    count: OPEN_RECORDS,
    value: "o",
    transactionalId: "open",
    leaveOpen: true,
  });
  expect(open.transaction).toBe("open");
  expect(new Set(open.records.map((r) => r.partition)).size).toBe(PARTITIONS);
  // Behind the open transaction: records read_committed consumers on the source cannot reach while it is
  // open, which the destination's failover (aborting it) must make readable.
  await produce(port, { ...primary, count: 6, value: "late", transactionalId: "late" });

  expect((await mirrors(port, "--create", "--mirror", "dr", "--source-bootstrap", "primary:9092")).code).toBe(
    0,
  );
  expect((await mirrors(port, "--add", "--topic", "events", "--mirror", "dr")).code).toBe(0);
  await waitForMirror(port, "dr", { caughtUp: true });

  const source = await logsOf(port, "primary");
  for (const log of source) {
    // Every acknowledged record is below the high watermark: the caught-up mirror has copied all of it.
    expect(log.highWatermark).toBe(log.logEndOffset);
    expect(log.producers.filter((p) => p.currentTxnStartOffset !== null)).toHaveLength(1);
  }
  const records = await consume(port, "primary", "read_uncommitted", WORKLOAD_RECORDS);
  expect(records).toHaveLength(WORKLOAD_RECORDS);
  const rows = await describeRows(port, "dr");
  expect(rows.map((r) => [r.state, r.lag])).toEqual(Array(PARTITIONS).fill(["MIRRORING", "0"]));
  await sigkill(node);
  template = { dir, source, records };
}, CLI_TEST_TIMEOUT_MS);

afterAll(() => {
  if (template) fs.rmSync(template.dir, { recursive: true, force: true });
});

/** A node on a fresh copy of the template. */
async function startCopy(): Promise<{ dir: string; node: NodeProcess }> {
  const dir = tempDir("cm-crash-anywhere");
  fs.cpSync(template.dir, dir, { recursive: true });
  // The template's node is dead; its pid may be some other process's by now.
  fs.rmSync(path.join(dir, ".lock"), { force: true });
  return { dir, node: await startNode(dir) };
}

describe("kill -9 anywhere in a failover loses nothing", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  for (let point = 0; point < KILL_POINTS; point++) {
    const plan = planOf(point);
    it(describePlan(plan), async () => {
      const { dir, node: first } = await startCopy();
      let node = first;
      const port = node.port;
      try {
        const run = await crashDuringFailover(dir, port, node, plan, (n) => {
          node = n;
        });
        const written = await checkOracles(port, run);
        if (plan.recoveryKillAfterMs === null) {
          // One more kill once the failover is over and the new writes are acknowledged: a restart must
          // find the failover done (no marker written again) and keep every write.
          await sigkill(node);
          node = await startNode(dir, port);
          await checkStable(port, written);
        }
      } catch (error) {
        throw new Error(
          `${describePlan(plan)} (data dir ${dir}): ${error instanceof Error ? error.message : String(error)}\nnode output:\n${node.output().slice(-4000)}`,
          { cause: error },
        );
      }
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
});

/** A record the source acknowledged to the test's writer. */
interface Acked {
  partition: number;
  offset: string;
  value: string;
}

/**
 * Writes one record at a time on the source, partitions in turn, until `stop()` or until a write fails (the
 * node was killed): mostly through the idempotent producer, every fourth in a transaction of its own (every
 * eighth aborted), so the mirror may copy a transaction without its marker. `acked` holds each acknowledged
 * record where the source put it.
 */
function sourceWriter(port: number): { acked: Acked[]; stop: () => Promise<void> } {
  const acked: Acked[] = [];
  let stopped = false;
  const loop = (async () => {
    for (let n = 0; !stopped; n++) {
      const partition = n % PARTITIONS;
      const txn = n % 4 === 3 ? { transactionalId: "writer", abort: n % 8 === 7 } : {};
      const value = `w${n}`;
      try {
        const r = await produce(port, { cluster: "primary", value, partition, ...txn });
        acked.push({ partition, offset: r.records[0]!.offset, value });
      } catch {
        return; // the node is gone: this write is not acknowledged
      }
    }
  })();
  return {
    acked,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/**
 * What a log's batches say, read as Kafka reads them: the data batches a read_committed consumer sees (not
 * transactional, or committed by a later COMMIT of their producer), and the transactions still open at the
 * end (by producer id, with their epoch).
 */
function transactionsOf(batches: readonly BatchView[]): {
  visible: BatchView[];
  open: Map<string, number>;
} {
  const visible: BatchView[] = [];
  const pending = new Map<string, { epoch: number; batches: BatchView[] }>();
  for (const b of batches) {
    if (!b.isControl) {
      if (!b.isTransactional) visible.push(b);
      else {
        const txn = pending.get(b.producerId) ?? { epoch: b.producerEpoch, batches: [] };
        txn.batches.push(b);
        pending.set(b.producerId, txn);
      }
    } else if (b.controlTypeName === "COMMIT" || b.controlTypeName === "ABORT") {
      if (b.controlTypeName === "COMMIT") visible.push(...(pending.get(b.producerId)?.batches ?? []));
      pending.delete(b.producerId);
    }
  }
  return { visible, open: new Map([...pending].map(([pid, t]) => [pid, t.epoch])) };
}

/** What a kill point did, for the oracles. */
interface FailoverRun {
  /** Records the writer had acknowledged on the source. */
  acked: Acked[];
  /**
   * Per partition, the source offset below which every record must be on the destination: the end of the
   * template's source log, or for a promote (whose writer stopped before it) the source's log end then.
   */
  barrier: bigint[];
}

/**
 * Asks for the failover, kills the node as `plan` says, restarts it and drives the failover to its end.
 * `--remove` runs with a writer on the source until the kill (an unplanned failover while the source takes
 * writes: what the mirror copied of them may or may not be kept, but only as a prefix of the source);
 * `--promote` follows a burst of writes it must catch up with (a planned switch after the writers stopped).
 */
async function crashDuringFailover(
  dir: string,
  port: number,
  started: NodeProcess,
  plan: KillPlan,
  restarted: (node: NodeProcess) => void,
): Promise<FailoverRun> {
  let node = started;
  await waitForMirror(port, "dr", { caughtUp: true });
  const writer = sourceWriter(port);
  const barrier = template.source.map((log) => BigInt(log.logEndOffset));
  if (plan.path === "promote") {
    await waitFor("a burst of writes on the source", () => writer.acked.length >= 2 * PARTITIONS);
    await writer.stop();
    // The writers stopped: the source's log ends (its high watermarks) cover every acknowledged record and
    // the markers of the writer's transactions. A promote must keep all of it.
    for (const [p, log] of (await logsOf(port, "primary")).entries()) {
      expect(log.highWatermark, `source partition ${p}`).toBe(log.logEndOffset);
      barrier[p] = BigInt(log.logEndOffset);
    }
    for (const a of writer.acked) expect(barrier[a.partition]).toBeGreaterThan(BigInt(a.offset));
  }
  const route = plan.path === "remove" ? "/v1/mirrors/dr/topics/remove" : "/v1/mirrors/dr/promote";
  const answer: { ok?: boolean; body?: string } = {};
  const request = fetch(`http://127.0.0.1:${port}${route}`, {
    method: "POST",
    headers: { ...authHeader(port), "content-type": "application/json" },
    body: JSON.stringify({ topic: "events" }),
  }).then(
    async (res) => {
      answer.body = await res.text();
      answer.ok = res.ok;
    },
    () => {}, // the node died first: no answer
  );
  // The kill delay is the point of the test: a deadline, not a wait for a condition.
  await new Promise((r) => setTimeout(r, plan.killAfterMs));
  await sigkill(node);
  await request;
  await writer.stop();
  const acknowledged = answer.ok === true;
  if (answer.body !== undefined) {
    // Answered before the kill: it must be a success (nothing in the workload makes it fail).
    expect(answer.ok, answer.body).toBe(true);
    const reply = JSON.parse(answer.body) as {
      message: string;
      partitions?: { partition: number; offset: string }[];
    };
    if (plan.path === "remove") expect(reply.message).toBe("Removed 1 topic(s) from mirror dr: [events]");
    else checkPromoted(reply, barrier);
  }
  const killed = node;
  node = await startNode(dir, port);
  restarted(node);
  const recovering = [node];
  if (plan.recoveryKillAfterMs !== null) {
    await new Promise((r) => setTimeout(r, plan.recoveryKillAfterMs ?? 0));
    await sigkill(node);
    node = await startNode(dir, port);
    restarted(node);
    recovering.push(node);
  }
  if (!acknowledged) {
    // The operator's answer to a command that got no answer: ask again (the route the CLI calls).
    const again = await fetch(`http://127.0.0.1:${port}${route}`, {
      method: "POST",
      headers: { ...authHeader(port), "content-type": "application/json" },
      body: JSON.stringify({ topic: "events" }),
    });
    const body = await again.text();
    if (plan.path === "remove") {
      // --remove is idempotent.
      expect(again.ok, body).toBe(true);
      expect(JSON.parse(body).message).toBe("Removed 1 topic(s) from mirror dr: [events]");
    } else if (again.ok) {
      // A promote again fails over once caught up ...
      checkPromoted(JSON.parse(body), barrier);
    } else {
      // ... or says the failover began before the kill: the removal is durable, and was made only after
      // the catch-up, so it must finish on its own.
      expect(body).toMatch(/it matches events \(removed\)/);
    }
  }
  // An acknowledged command is not asked again: it must survive the kills on its own.
  await waitForStopped(port);
  // Where the kill landed, for the record: the states the killed node logged (every 200 ms, so a state it
  // passed through quickly may be missing), and those the restarted node found each partition in.
  console.log(
    `${describePlan(plan)}: ${acknowledged ? "answered" : "no answer"} before the kill; ${writer.acked.length} source writes acknowledged; states logged before the kill: ${statesLogged(killed, false)}; found after the restart: ${recovering.map((n) => statesLogged(n, true)).find((s) => s !== "none") ?? "none"}`,
  );
  return { acked: writer.acked, barrier };
}

/** Waits until describe shows every partition STOPPED (not before the restarted coordinators list them). */
async function waitForStopped(port: number): Promise<void> {
  await waitFor(
    "every partition STOPPED",
    async () => {
      const rows = await describeRows(port, "dr");
      return rows.length === PARTITIONS && rows.every((r) => r.state === "STOPPED");
    },
    BOUND_MS,
  );
}

/** The partition states `node` logged (the first one of each partition only, with `first`), counted. */
function statesLogged(node: NodeProcess, first: boolean): string {
  const states: string[] = [];
  const seen = new Set<number>();
  for (const line of node.output().split("\n")) {
    if (!line.includes('"event":"mirror.partition.state"')) continue;
    let change: { partition: number; to: string };
    try {
      change = JSON.parse(line);
    } catch {
      continue; // the last line of a killed node may be cut short
    }
    if (first && seen.has(change.partition)) continue;
    seen.add(change.partition);
    states.push(change.to);
  }
  const counts = new Map<string, number>();
  for (const state of states) counts.set(state, (counts.get(state) ?? 0) + 1);
  return counts.size === 0 ? "none" : [...counts].map(([state, n]) => `${n} ${state}`).join(", ");
}

/** A promote's answer: it failed over every partition at lag 0 against what the source acknowledged. */
function checkPromoted(
  reply: { message: string; partitions?: { partition: number; offset: string }[] },
  barrier: readonly bigint[],
): void {
  expect(reply.message).toMatch(
    new RegExp(`^Promoted 1 topic\\(s\\) of mirror dr: \\[events\\]; ${PARTITIONS} partition\\(s\\)`),
  );
  expect(new Map(reply.partitions!.map((r) => [r.partition, r.offset]))).toEqual(
    new Map(barrier.map((end, p) => [p, String(end)])),
  );
}

/** The fields of a failover marker the oracles compare. */
function markerOf(b: BatchView) {
  return { controlTypeName: b.controlTypeName, producerId: b.producerId, producerEpoch: b.producerEpoch };
}

/** The absolute oracles, against the source's log (the barrier and what the writer was acknowledged). */
async function checkOracles(port: number, failover: FailoverRun): Promise<LogView[]> {
  // The high watermark has no event: poll until it covers the failover's markers everywhere.
  await waitFor(
    "high watermarks at the log ends",
    async () => (await logsOf(port, null)).every((log) => log.highWatermark === log.logEndOffset),
    BOUND_MS,
  );
  const source = await logsOf(port, "primary");
  const dest = await logsOf(port, null);
  const sourceRecords = await consume(
    port,
    "primary",
    "read_uncommitted",
    source.reduce(
      (n, log) => n + log.batches.filter((b) => !b.isControl).reduce((m, b) => m + Number(b.recordCount), 0),
      0,
    ),
  );

  // The source lost nothing: its log at the barrier is still there, every write it acknowledged is where it
  // said, and the transaction the template left open is still open there (only the destination aborts it).
  for (let p = 0; p < PARTITIONS; p++) {
    const at = `source partition ${p}`;
    expect(source[p]!.batches.slice(0, template.source[p]!.batches.length), at).toEqual(
      template.source[p]!.batches,
    );
    const open = (log: LogView) => log.producers.filter((x) => x.currentTxnStartOffset !== null);
    expect(open(source[p]!), at).toEqual(expect.arrayContaining(open(template.source[p]!)));
  }
  // (A write in flight at the kill may be on the source too, unacknowledged.)
  expect(sourceRecords.filter((m) => m.value?.startsWith("w"))).toEqual(
    expect.arrayContaining(failover.acked),
  );
  expect(sourceRecords.filter((m) => !m.value?.startsWith("w"))).toEqual(template.records);

  const rows = (await getJson<{ rows: Record<string, unknown>[] }>(port, "/v1/describe?mirror=dr")).rows;
  const mirroredEnd: bigint[] = [];
  const expectedEnd: bigint[] = [];
  /** The offset ranges of the copied batches a read_committed consumer must read. */
  const visible: { partition: number; from: bigint; to: bigint }[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const src = source[p]!;
    const log = dest[p]!;
    const at = `partition ${p}`;
    // The destination's mirrored batches are the source's first ones, at the same offsets, byte for byte
    // (the CRC-32C covers the records; size and every header field alike) ...
    expect(log.logStartOffset, at).toBe(src.logStartOffset);
    expect(
      log.batches.every((b) => b.crcValid),
      at,
    ).toBe(true);
    let mirrored = 0;
    while (
      mirrored < log.batches.length &&
      mirrored < src.batches.length &&
      isDeepStrictEqual(log.batches[mirrored], src.batches[mirrored])
    )
      mirrored++;
    const end =
      mirrored === 0 ? BigInt(src.logStartOffset) : BigInt(src.batches[mirrored - 1]!.lastOffset) + 1n;
    mirroredEnd.push(end);
    // ... and hold at least everything below the barrier.
    expect(end, `${at}: the end of what the destination kept of the source`).toBeGreaterThanOrEqual(
      failover.barrier[p]!,
    );
    // Then exactly the failover's markers: one ABORT per transaction open at the end of the copy (the
    // template's open one, and a writer's transaction whose marker was not copied), then one PID reset.
    const copy = transactionsOf(log.batches.slice(0, mirrored));
    visible.push(
      ...copy.visible.map((b) => ({ partition: p, from: BigInt(b.baseOffset), to: BigInt(b.lastOffset) })),
    );
    const tail = log.batches.slice(mirrored);
    const byProducer = (a: { producerId: string }, b: { producerId: string }) =>
      Number(BigInt(a.producerId) - BigInt(b.producerId));
    expect(tail.at(-1) && markerOf(tail.at(-1)!), `${at}: the failover's PID reset ends the log`).toEqual({
      controlTypeName: "MIRROR_PID_RESET",
      producerId: "-1",
      producerEpoch: -1,
    });
    expect(tail.slice(0, -1).map(markerOf).sort(byProducer), `${at}: the failover's ABORT markers`).toEqual(
      [...copy.open]
        .map(([producerId, producerEpoch]) => ({ controlTypeName: "ABORT", producerId, producerEpoch }))
        .sort(byProducer),
    );
    // The template's open transaction is one of them: a failover closes it whenever it is killed.
    for (const x of template.source[p]!.producers.filter((y) => y.currentTxnStartOffset !== null)) {
      expect(copy.open.get(x.producerId), `${at}: the template's open transaction`).toBe(x.producerEpoch);
    }
    const lme = Math.max(...log.batches.slice(0, mirrored).map((b) => b.partitionLeaderEpoch));
    for (const b of tail)
      expect(b.partitionLeaderEpoch, `${at}: a failover marker's epoch`).toBeGreaterThan(lme);
    expectedEnd.push(end + BigInt(tail.length));
    // No hanging transaction: the LSO is the log end, and the PID reset left no producer state.
    expect([log.logEndOffset, log.highWatermark, log.lastStableOffset], at).toEqual(
      Array(3).fill(String(end + BigInt(tail.length))),
    );
    expect(log.producers, at).toEqual([]);
    // describe agrees with the logs.
    expect(
      rows.find((r) => r.partition === p),
      at,
    ).toMatchObject({
      state: "STOPPED",
      lag: null,
      destinationOffset: log.logEndOffset,
      sourceOffset: src.highWatermark,
      lastMirrorEpoch: lme,
      errorMessage: null,
    });
  }

  // A new producer on the destination works: idempotent and transactional.
  const plain = await produce(port, { count: 8, value: "after" });
  const txn = await produce(port, { count: 4, value: "after-txn", transactionalId: "dest-txn" });
  expect(txn.transaction).toBe("committed");
  for (const r of [...plain.records, ...txn.records]) {
    expect(BigInt(r.offset), `a new write on partition ${r.partition}`).toBeGreaterThanOrEqual(
      expectedEnd[r.partition]!,
    );
  }

  // read_committed reaches the log end: every committed record the destination kept (including those
  // behind the open transaction, which the source's read_committed consumers cannot reach), then the new
  // ones.
  const committed = sourceRecords.filter((m) =>
    visible.some(
      (v) => v.partition === m.partition && v.from <= BigInt(m.offset) && BigInt(m.offset) <= v.to,
    ),
  );
  // (The model agrees with what the workload wrote: its aborted and open records are never read, the rest are.)
  const aborted = (m: Consumed) => /^[ao]-/.test(m.value ?? "");
  expect(committed.filter(aborted)).toEqual([]);
  expect(committed).toEqual(expect.arrayContaining(template.records.filter((m) => !aborted(m))));
  const read = await consume(port, null, "read_committed", committed.length + 12);
  expect(read.filter((m) => BigInt(m.offset) < expectedEnd[m.partition]!)).toEqual(committed);
  expect(
    read
      .filter((m) => BigInt(m.offset) >= expectedEnd[m.partition]!)
      .map((m) => m.value)
      .sort(),
  ).toEqual(
    [
      ...Array.from({ length: 8 }, (_, i) => `after-${i}`),
      ...Array.from({ length: 4 }, (_, i) => `after-txn-${i}`),
    ].sort(),
  );
  const after = await logsOf(port, null);
  const rowsAfter = (
    await getJson<{ rows: { partition: number; destinationOffset: string }[] }>(
      port,
      "/v1/describe?mirror=dr",
    )
  ).rows;
  for (let p = 0; p < PARTITIONS; p++) {
    const log = after[p]!;
    expect(
      log.batches.filter((b) => b.controlTypeName === "MIRROR_PID_RESET"),
      `partition ${p}`,
    ).toHaveLength(1);
    expect(log.lastStableOffset, `partition ${p}`).toBe(log.highWatermark);
    expect(rowsAfter.find((r) => r.partition === p)?.destinationOffset, `partition ${p}`).toBe(
      log.logEndOffset,
    );
  }
  return after;
}

/** After a restart, the destination's logs are `before`, batch for batch, and it is writable. */
async function checkStable(port: number, before: readonly LogView[]): Promise<void> {
  await waitForStopped(port);
  await waitFor(
    "high watermarks at the log ends",
    async () => (await logsOf(port, null)).every((log) => log.highWatermark === log.logEndOffset),
    BOUND_MS,
  );
  const now = await logsOf(port, null);
  for (let p = 0; p < PARTITIONS; p++) {
    expect(now[p]!.batches, `partition ${p} after a restart`).toEqual(before[p]!.batches);
    expect(now[p]!.lastStableOffset, `partition ${p} after a restart`).toBe(before[p]!.logEndOffset);
  }
  const more = await produce(port, { count: 4, value: "after-restart" });
  for (const r of more.records) {
    expect(BigInt(r.offset), `partition ${r.partition}`).toBeGreaterThanOrEqual(
      BigInt(before[r.partition]!.logEndOffset),
    );
  }
}
