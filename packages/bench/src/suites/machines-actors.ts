import {
  applyEvent,
  LIFECYCLE_STATES,
  type MirrorPartitionEvent,
  type MirrorPartitionSnapshot,
  type RecoveredPartition,
  recoverPartition,
  startMirrorPartitionActor,
} from "@cluster-mirror/machines";
import { type BenchResult, type BenchSuite, measureOpsPerSecond, result, timeOnceMs } from "../harness";

const PARTITIONS = 100_000;

/** A loop MIRRORING -> PAUSING -> PAUSED -> MIRRORING: six events, three committed lifecycle changes. */
const CYCLE: readonly MirrorPartitionEvent[] = [
  { type: "PAUSE" },
  { type: "COMMITTED", stateEpoch: 0 },
  { type: "FETCHER_REMOVED", stateEpoch: 0, latestMirroredEpoch: 3 },
  { type: "COMMITTED", stateEpoch: 0 },
  { type: "RESUME" },
  { type: "COMMITTED", stateEpoch: 0 },
];

/** The cycle's events with the `stateEpoch` a runtime would put on them (the one they answer). */
function withEpoch(s: MirrorPartitionSnapshot, e: MirrorPartitionEvent): MirrorPartitionEvent {
  if (!("stateEpoch" in e)) return e;
  const pending = s.context.pending;
  const epoch = e.type === "COMMITTED" && pending ? pending.record.stateEpoch : s.context.record.stateEpoch;
  return { ...e, stateEpoch: epoch };
}

const MIRRORING_RECORD: RecoveredPartition = {
  state: "MIRRORING",
  leaderEpoch: 3,
  stateEpoch: 7,
  errorMessage: null,
  retryAttempt: 0,
  previousState: "PREPARING",
  lastMirrorEpoch: -1,
};

/** Records spread over every persisted lifecycle state, as a coordinator's replay would produce. */
function records(n: number): RecoveredPartition[] {
  const states = LIFECYCLE_STATES.filter((s) => s !== "UNKNOWN");
  const out: RecoveredPartition[] = [];
  for (let i = 0; i < n; i++) {
    const state = states[i % states.length] ?? "MIRRORING";
    out.push({
      state,
      leaderEpoch: i % 50,
      stateEpoch: 1 + (i % 1000),
      errorMessage: state === "FAILED" ? "broker unavailable" : null,
      retryAttempt: state === "FAILED" ? i % 3 : 0,
      previousState: "PREPARING",
      lastMirrorEpoch: -1,
    });
  }
  return out;
}

const gc = (globalThis as { gc?: () => void }).gc;

function heapUsed(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** Heap bytes per item retained by `build` (items kept alive until measured). */
function heapPerItem<T>(n: number, build: (i: number) => T): number {
  const before = heapUsed();
  const keep: T[] = new Array(n);
  for (let i = 0; i < n; i++) keep[i] = build(i);
  const after = heapUsed();
  if (keep.length !== n) throw new Error("unreachable");
  return (after - before) / n;
}

export const suite: BenchSuite = {
  name: "machines",
  run(): BenchResult[] {
    const results: BenchResult[] = [];

    // Transitions per second: a live actor (actor.send) vs the pure transition() on snapshots.
    const actor = startMirrorPartitionActor({ record: MIRRORING_RECORD });
    const live = measureOpsPerSecond(() => {
      for (const e of CYCLE) actor.send(withEpoch(actor.getSnapshot(), e));
    }, CYCLE.length);
    actor.stop();
    let snapshot: MirrorPartitionSnapshot = recoverPartition({ record: MIRRORING_RECORD }).snapshot;
    const pure = measureOpsPerSecond(() => {
      for (const e of CYCLE) snapshot = applyEvent(snapshot, withEpoch(snapshot, e)).snapshot;
    }, CYCLE.length);
    results.push(
      result("partition.events.liveActor", live, "ops/s", pure, "baseline: pure transition() (applyEvent)"),
    );

    // Rehydration of 100,000 partitions from records (target: <= 2000 ms, <= 4096 bytes each).
    const recs = records(PARTITIONS);
    const plainMs = timeOnceMs(() => {
      const out = new Array(PARTITIONS);
      for (let i = 0; i < PARTITIONS; i++) out[i] = { ...recs[i], pending: null };
    });
    // Warm the JIT on a small batch so the timed run measures steady state.
    for (let i = 0; i < 2000; i++) recoverPartition({ record: recs[i] ?? null, retryJitter: 0.5 });
    const pureMs = timeOnceMs(() => {
      const out = new Array(PARTITIONS);
      for (let i = 0; i < PARTITIONS; i++)
        out[i] = recoverPartition({ record: recs[i] ?? null, retryJitter: 0.5 }).snapshot;
    });
    results.push(
      result(
        "partition.rehydrate100k.recoverPartition",
        pureMs,
        "ms",
        plainMs,
        "baseline: copying the records; target <= 2000 ms",
      ),
    );
    for (let i = 0; i < 2000; i++)
      recoverPartition({ record: recs[i] ?? MIRRORING_RECORD, retryJitter: 0.5 });
    const fastMs = timeOnceMs(() => {
      const out = new Array(PARTITIONS);
      for (let i = 0; i < PARTITIONS; i++)
        out[i] = recoverPartition({ record: recs[i] ?? MIRRORING_RECORD, retryJitter: 0.5 });
    });
    results.push(
      result(
        "partition.rehydrate100k.initialTransition",
        fastMs,
        "ms",
        plainMs,
        "baseline: copying the records; target <= 2000 ms",
      ),
    );
    for (let i = 0; i < 2000; i++) startMirrorPartitionActor({ record: recs[i] ?? null, retryJitter: 0.5 });
    const actorsMs = timeOnceMs(() => {
      const out = new Array(PARTITIONS);
      for (let i = 0; i < PARTITIONS; i++) {
        out[i] = startMirrorPartitionActor({ record: recs[i] ?? null, retryJitter: 0.5 });
      }
    });
    results.push(
      result(
        "partition.rehydrate100k.liveActors",
        actorsMs,
        "ms",
        pureMs,
        "baseline: recoverPartition (pure initialTransition); target <= 2000 ms",
      ),
    );

    const note = gc ? "" : " (no --expose-gc: heap figures are noisy)";
    const plainBytes = heapPerItem(PARTITIONS, (i) => ({ ...recs[i], pending: null }));
    const snapshotBytes = heapPerItem(
      PARTITIONS,
      (i) => recoverPartition({ record: recs[i] ?? MIRRORING_RECORD, retryJitter: 0.5 }).snapshot,
    );
    results.push(
      result(
        "partition.heapPerPartition.snapshot",
        snapshotBytes,
        "bytes",
        plainBytes,
        `baseline: a copied record; target <= 4096${note}`,
      ),
    );
    const actorBytes = heapPerItem(PARTITIONS, (i) =>
      startMirrorPartitionActor({ record: recs[i] ?? null, retryJitter: 0.5 }),
    );
    results.push(
      result(
        "partition.heapPerPartition.liveActor",
        actorBytes,
        "bytes",
        snapshotBytes,
        `baseline: a pure snapshot; target <= 4096${note}`,
      ),
    );
    return results;
  },
};
