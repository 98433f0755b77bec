import { and, assign, setup } from "xstate";
import { effect } from "./effect";
import { initialContext } from "./initial-context";
import {
  LEADER_EPOCH_BUMP_INCREMENT,
  LEADER_EPOCH_BUMP_THRESHOLD,
  type LifecycleState,
  type MirrorPartitionStateRecord,
} from "./lifecycle";
import type {
  AppendStateRecordParams,
  BumpLeaderEpochParams,
  EffectParams,
  MirrorPartitionContext,
  MirrorPartitionEvent,
  MirrorPartitionFailure,
  MirrorPartitionInput,
  RecordLastMirrorEpochParams,
  ScheduleRetryParams,
  TruncateToEpochParams,
} from "./mirror-partition.types";
import { buildPendingCommit, causeOf } from "./pending-commit";
import { retryBackoffDelayMs } from "./retry-backoff";

type Args = { readonly context: MirrorPartitionContext; readonly event: MirrorPartitionEvent };

/** The `stateEpoch` an effect of the committed state is requested under. */
const epoch = ({ context }: Args): EffectParams => ({ stateEpoch: context.record.stateEpoch });

/** `minLeaderEpoch` of a bump while MIRRORING or EPOCH_FENCING: above the local epoch and every batch. */
function mirroringBumpMin(context: MirrorPartitionContext): number {
  return Math.max(context.localLeaderEpoch, context.highestBatchEpoch) + LEADER_EPOCH_BUMP_INCREMENT;
}

/** `minLeaderEpoch` of the failover bump (spec §4 STOPPING step 2): above the LME and the local epoch. */
function failoverBumpMin(context: MirrorPartitionContext): number {
  return Math.max(context.lastMirrorEpoch, context.localLeaderEpoch) + 1;
}

/**
 * `aligned` when a change to PREPARING commits: a retry (or START) of a FAILED partition whose log was still
 * a copy of this source (aligned, nothing appended locally since) stays aligned; any other start (UNKNOWN,
 * STOPPED, a failed failover) is not aligned until PREPARING's truncation completes.
 */
function alignedOnPreparing(context: MirrorPartitionContext): boolean {
  return context.record.state === "FAILED" && context.aligned;
}

/** States a partition is in only once it mirrored (its log is a copy of the source, fetched or fetching). */
const MIRRORED_STATES: ReadonlySet<LifecycleState | null> = new Set<LifecycleState>([
  "MIRRORING",
  "EPOCH_FENCING",
  "PAUSING",
  "PAUSED",
]);

/**
 * `holdsMirroredData` once the change to `to` commits: a mirroring state holds mirrored data; STOPPED closed
 * it (local producers write next) and a start from UNKNOWN or STOPPED begins a new episode on the topic's
 * own log; a retry or a failure keeps what the partition held.
 */
function holdsMirroredDataAfter(context: MirrorPartitionContext, to: LifecycleState): boolean {
  if (MIRRORED_STATES.has(to)) return true;
  if (to === "STOPPED") return false;
  if (to === "PREPARING") return context.record.state === "FAILED" && context.holdsMirroredData;
  return context.holdsMirroredData;
}

/** The previous state of a FAILED record the retry resumes in place (spec §4: "where that is safe"). */
const RESUMES_MIRRORING: ReadonlySet<LifecycleState | null> = new Set<LifecycleState>([
  "MIRRORING",
  "EPOCH_FENCING",
]);
const RESUMES_PAUSED: ReadonlySet<LifecycleState | null> = new Set<LifecycleState>(["PAUSING", "PAUSED"]);

/**
 * TRUNCATED: the log is a copy of the source from here on, so the LME of the earlier failover no longer
 * describes it: clear it (the record is appended before the MIRRORING one, on the same partition).
 */
const ALIGNED = ["noteAligned", { type: "clearLastMirrorEpoch", params: epoch }] as const;

/** The local epoch an EPOCH_OBSERVED compares against: the larger of what we knew and what it reports. */
function localEpochWith(context: MirrorPartitionContext, event: MirrorPartitionEvent): number {
  return event.type === "EPOCH_OBSERVED"
    ? Math.max(context.localLeaderEpoch, event.localLeaderEpoch)
    : context.localLeaderEpoch;
}

/** How `recovering` enters a recovered record's state; one route per distinct set of effects. */
export const RECOVERY_ROUTES = [
  { route: "UNKNOWN", target: "UNKNOWN" },
  { route: "PREPARING", target: "PREPARING" },
  // PREPARING had completed for a paused partition: ask for PAUSING again, without a fetcher.
  { route: "MIRRORING_PAUSE_REQUESTED", target: "MIRRORING.committing_PAUSING" },
  // Back from EPOCH_FENCING: the fetcher was never removed, so the commit step added none.
  { route: "MIRRORING_AFTER_EPOCH_FENCING", target: "MIRRORING" },
  { route: "MIRRORING", target: "MIRRORING" },
  { route: "EPOCH_FENCING", target: "EPOCH_FENCING" },
  { route: "PAUSING", target: "PAUSING" },
  { route: "PAUSED", target: "PAUSED" },
  { route: "STOPPING", target: "STOPPING" },
  { route: "STOPPED", target: "STOPPED" },
  { route: "FAILED_NON_RETRYABLE", target: "FAILED.awaitingOperator" },
  { route: "FAILED", target: "FAILED.backingOff" },
] as const;

/** Name of a recovery route. */
export type RecoveryRoute = (typeof RECOVERY_ROUTES)[number]["route"];

/** The route `recovering` takes for a context built from a record (pure; `rehydratePartition` uses it). */
export function recoveryRoute(context: MirrorPartitionContext): RecoveryRoute {
  const r = context.record;
  switch (r.state) {
    case "MIRRORING":
      if (context.pauseRequested) return "MIRRORING_PAUSE_REQUESTED";
      return r.previousState === "EPOCH_FENCING" ? "MIRRORING_AFTER_EPOCH_FENCING" : "MIRRORING";
    case "FAILED":
      return r.retryAttempt < 0 ? "FAILED_NON_RETRYABLE" : "FAILED";
    default:
      return r.state;
  }
}

/** An effect whose only parameter is the committed `stateEpoch`. */
function fx<const T extends string>(type: T) {
  return { type, params: epoch } as const;
}

/** The `stateEpoch` of the pending record (what a commit retry timer is armed for). */
const pendingEpoch = ({ context }: Args): EffectParams => ({
  stateEpoch: context.pending?.record.stateEpoch ?? context.record.stateEpoch,
});

/** Effects a lifecycle state's own commit edges run before they leave it (what the state started). */
const CLEANUP_ON_LEAVE: {
  readonly [S in LifecycleState]?: readonly ReturnType<typeof fx<"releaseAppends">>[];
} = {
  EPOCH_FENCING: [fx("releaseAppends")],
};

/** Where COMMITTED goes for a change `from -> to`, and what it does beyond applying the commit. */
function committedEdges(from: LifecycleState, to: LifecycleState) {
  const cleanup = CLEANUP_ON_LEAVE[from] ?? [];
  const base = {} as const;
  const deferred = {
    ...base,
    guard: and(["pendingMatches", "hasDeferredFailure"]),
    target: `#mirrorPartition.${to}.committing_FAILED`,
    actions: [...cleanup, "applyCommit", "prepareDeferredFailure"],
  } as const;
  if (to === "MIRRORING" && (from === "PREPARING" || from === "FAILED")) {
    return [
      deferred,
      {
        ...base,
        guard: and(["pendingMatches", "pendingPauseRequested"]),
        target: "#mirrorPartition.MIRRORING.committing_PAUSING",
        actions: ["applyCommit", { type: "prepareCommit", params: { to: "PAUSING" } }],
      },
      {
        ...base,
        guard: "pendingMatches",
        target: "#mirrorPartition.MIRRORING",
        actions: ["applyCommit", fx("addFetcher")],
      },
    ] as const;
  }
  if (to === "MIRRORING" && from === "PAUSED") {
    return [
      deferred,
      {
        ...base,
        guard: "pendingMatches",
        target: "#mirrorPartition.MIRRORING",
        actions: ["applyCommit", fx("addFetcher")],
      },
    ] as const;
  }
  if (to === "FAILED") {
    // FAILED -> FAILED stays inside FAILED, so FAILED's entry does not run again: run it on the edge.
    const entry = from === "FAILED" ? [fx("removeFetcher")] : [];
    return [
      deferred,
      {
        ...base,
        guard: and(["pendingMatches", "pendingIsNonRetryable"]),
        target: "#mirrorPartition.FAILED.awaitingOperator",
        actions: [...cleanup, "applyCommit", ...entry],
      },
      {
        ...base,
        guard: "pendingMatches",
        target: "#mirrorPartition.FAILED.backingOff",
        actions: [...cleanup, "applyCommit", ...entry],
      },
    ] as const;
  }
  return [
    deferred,
    {
      ...base,
      guard: "pendingMatches",
      target: `#mirrorPartition.${to}`,
      actions: [...cleanup, "applyCommit"],
    },
  ] as const;
}

/** A failure applied right away (no append in flight): cancel `cancel` first when given. */
function failNow(
  lifecycle: LifecycleState,
  cancel: "cancelCommitRetry" | "cancelRetryTimer" | "cancelTruncation",
) {
  const cancelAction =
    cancel === "cancelCommitRetry" ? { type: cancel, params: pendingEpoch } : { type: cancel, params: epoch };
  const actions = [cancelAction, { type: "prepareCommit", params: { to: "FAILED" } }] as const;
  const target = `#mirrorPartition.${lifecycle}.committing_FAILED`;
  return {
    FAIL: { target, reenter: true, actions },
    EFFECT_FAILED: { guard: "currentEpoch", target, reenter: true, actions },
  } as const;
}

/**
 * The commit step of a change `lifecycle -> to`: append the record, then (and only then) move. A transient
 * failure re-appends the same record after a backoff; a failure of the partition that arrives meanwhile is
 * deferred until the append settles; FENCED (handled at the root) ends the actor.
 */
function committing(lifecycle: LifecycleState, to: LifecycleState) {
  return {
    initial: "appending",
    states: {
      appending: {
        entry: {
          type: "appendStateRecord",
          params: ({ context }: Args): AppendStateRecordParams =>
            (context.pending as { record: MirrorPartitionStateRecord }).record,
        },
        on: {
          COMMITTED: committedEdges(lifecycle, to),
          COMMIT_FAILED: [
            {
              guard: and(["pendingMatches", "hasDeferredFailure"]),
              target: `#mirrorPartition.${lifecycle}.committing_FAILED`,
              reenter: true,
              actions: "prepareDeferredFailure",
            },
            { guard: "pendingMatches", target: "retrying", actions: "noteCommitFailure" },
          ],
          FAIL: { actions: "deferFailure" },
          EFFECT_FAILED: { guard: "currentEpoch", actions: "deferFailure" },
        },
      },
      retrying: {
        entry: {
          type: "scheduleCommitRetry",
          params: ({ context }: Args): ScheduleRetryParams => ({
            stateEpoch: pendingEpoch({ context, event: { type: "START" } }).stateEpoch,
            attempt: context.commitAttempt,
            delayMs: retryBackoffDelayMs(context.commitAttempt, context.commitJitter, context.retry),
          }),
        },
        on: {
          COMMIT_RETRY_TIMER_FIRED: {
            guard: "pendingMatches",
            target: "appending",
            actions: "noteCommitRetry",
          },
          ...failNow(lifecycle, "cancelCommitRetry"),
        },
      },
    },
  } as const;
}

type ChangeGuard =
  | "batchEpochAboveLocal"
  | "previousStateWasFailover"
  | "retryResumesMirroring"
  | "retryResumesPaused"
  | "currentEpoch";

/** A lifecycle change from a step: record what will be appended, then wait in the sibling `committing_<to>`. */
function change<const To extends LifecycleState>(
  to: To,
  guard: ChangeGuard | readonly ChangeGuard[] = "currentEpoch",
) {
  return {
    // `[]`: an unguarded change (a command); one name or several (all must hold).
    guard: typeof guard === "string" ? guard : guard.length === 0 ? undefined : and(guard as ChangeGuard[]),
    target: `committing_${to}`,
    actions: { type: "prepareCommit", params: { to } },
  } as const;
}

/** A lifecycle change handled by the lifecycle state itself, refused while another change waits. */
function changeFromAnyStep<const To extends LifecycleState>(to: To) {
  return {
    guard: "noPendingCommit",
    target: `.committing_${to}`,
    actions: { type: "prepareCommit", params: { to } },
  } as const;
}

/** A step that started cancellable work: leaving it on STOP or a failure cancels that work first. */
function cancelling(lifecycle: LifecycleState, cancel: "cancelTruncation" | "cancelRetryTimer") {
  return {
    STOP: {
      target: `#mirrorPartition.${lifecycle}.committing_STOPPING`,
      actions: [fx(cancel), { type: "prepareCommit", params: { to: "STOPPING" } }] as const,
    },
    ...failNow(lifecycle, cancel),
  } as const;
}

/**
 * STOPPING step 2 (spec §4): record the LME and bump the leader epoch above it, in parallel; then `onDone`:
 * the markers (step 3) for a log that holds mirrored data, or straight to STOPPED for one that holds none.
 */
function recordingLmeAndBumpingEpoch<const Done>(onDone: Done) {
  return {
    type: "parallel",
    states: {
      lastMirrorEpoch: {
        initial: "recording",
        states: {
          recording: {
            entry: {
              type: "recordLastMirrorEpoch",
              params: ({ context }: Args): RecordLastMirrorEpochParams => ({
                stateEpoch: context.record.stateEpoch,
                lme: context.lastMirrorEpoch,
              }),
            },
            on: { LME_RECORDED: { guard: "currentEpoch", target: "recorded" } },
          },
          recorded: { type: "final" },
        },
      },
      leaderEpoch: {
        initial: "bumping",
        states: {
          bumping: {
            entry: {
              type: "bumpLeaderEpoch",
              params: ({ context }: Args): BumpLeaderEpochParams => ({
                stateEpoch: context.record.stateEpoch,
                minLeaderEpoch: failoverBumpMin(context),
              }),
            },
            on: {
              EPOCH_BUMPED: {
                guard: { type: "bumpSatisfies", params: { bump: "failover" } },
                target: "bumped",
                actions: "noteLeaderEpochBumped",
              },
            },
          },
          bumped: { type: "final" },
        },
      },
    },
    onDone,
  } as const;
}

/** Every lifecycle state may fail (spec §4: FAILED is valid from any state). */
const failures = {
  FAIL: changeFromAnyStep("FAILED"),
  EFFECT_FAILED: { ...changeFromAnyStep("FAILED"), guard: and(["noPendingCommit", "currentEpoch"]) },
} as const;

/**
 * The mirror partition actor of spec §4: one per mirrored topic-partition.
 *
 * Top-level states are the lifecycle states (plus `recovering`, the entry point that rehydrates from a
 * `__mirror_state` record, and `fenced`, the end when another coordinator took over). Inside each,
 * `committing_X` steps are the commit protocol: the machine requests `appendStateRecord` and waits; COMMITTED
 * enters X and starts X's effects; COMMIT_FAILED re-appends the same record after a backoff. Every effect
 * carries the `stateEpoch` it was requested under and every result carries it back: stale results are
 * dropped. Every effect is a named action with no implementation here.
 */
export const mirrorPartitionMachine = setup({
  types: {} as {
    context: MirrorPartitionContext;
    events: MirrorPartitionEvent;
    input: MirrorPartitionInput | undefined;
  },
  actions: {
    // The commit protocol.
    prepareCommit: assign(({ context, event }, params: { to: LifecycleState }) => ({
      pending: buildPendingCommit(context, params.to, causeOf(event)),
      commitAttempt: 0,
    })),
    prepareDeferredFailure: assign(({ context }) => ({
      pending: buildPendingCommit(context, "FAILED", {
        kind: "failure",
        failure: context.deferredFailure as MirrorPartitionFailure,
      }),
      deferredFailure: null,
      commitAttempt: 0,
    })),
    applyCommit: assign(({ context }) => {
      const pending = context.pending as NonNullable<MirrorPartitionContext["pending"]>;
      const preparing = pending.to === "PREPARING";
      return {
        record: pending.record,
        retryJitter: pending.retryJitter,
        pauseRequested: pending.pauseRequested,
        pending: null,
        proactiveBumpMin: null,
        commitAttempt: 0,
        // A new mirroring episode: the next failover captures its own LME. The recorded LME stays until the
        // truncation makes the log a copy of the source (TRUNCATED clears it); see `alignedOnPreparing`.
        lmeCaptured: preparing ? false : context.lmeCaptured,
        aligned: preparing ? alignedOnPreparing(context) : context.aligned,
        holdsMirroredData: holdsMirroredDataAfter(context, pending.to),
      };
    }),
    deferFailure: assign(({ context, event }) => {
      if (event.type !== "FAIL" && event.type !== "EFFECT_FAILED") return {};
      const kept = context.deferredFailure;
      // Keep the first failure, unless a later one is non-retryable and the first is not.
      const failure = { message: event.message, retryable: event.retryable, random: event.random };
      return { deferredFailure: kept === null || (kept.retryable && !failure.retryable) ? failure : kept };
    }),
    noteCommitFailure: assign(({ event }) => ({
      commitJitter: event.type === "COMMIT_FAILED" ? event.random : 0,
    })),
    noteCommitRetry: assign(({ context }) => ({ commitAttempt: context.commitAttempt + 1 })),
    appendStateRecord: effect<AppendStateRecordParams>(),
    scheduleCommitRetry: effect<ScheduleRetryParams>(),
    cancelCommitRetry: effect<EffectParams>(),
    // Bookkeeping from results and observations (never touches `record`: only a commit does).
    noteSourceLastMirrorEpoch: assign(({ event }) => ({
      sourceLastMirrorEpoch: event.type === "LME_FOUND" ? event.lme : -1,
    })),
    // Spec §4 STOPPING step 2, once per failover: the log's latest epoch is the LME only when the log is a
    // copy of the source (aligned); otherwise its latest batches are local ones, so keep the recorded LME.
    // STOPPING appends locally next, so the log is no longer aligned once the LME is captured.
    captureLastMirrorEpoch: assign(({ context, event }) =>
      context.lmeCaptured || event.type !== "FETCHER_REMOVED"
        ? {}
        : {
            lastMirrorEpoch: context.aligned ? event.latestMirroredEpoch : context.lastMirrorEpoch,
            lmeCaptured: true,
            aligned: false,
          },
    ),
    // PREPARING's truncation is done (see ALIGNED).
    // The log is now a copy of the source's: the producer state it holds came from the source's batches.
    noteAligned: assign({ aligned: true, lastMirrorEpoch: -1, holdsMirroredData: true }),
    noteObservedEpochs: assign(({ context, event }) => ({
      localLeaderEpoch: localEpochWith(context, event),
      highestBatchEpoch:
        event.type === "EPOCH_OBSERVED"
          ? Math.max(context.highestBatchEpoch, event.batchEpoch)
          : context.highestBatchEpoch,
    })),
    noteProactiveBump: assign(({ context }) => ({ proactiveBumpMin: mirroringBumpMin(context) })),
    noteLeaderEpochBumped: assign(({ context, event }) => ({
      localLeaderEpoch:
        event.type === "EPOCH_BUMPED"
          ? Math.max(context.localLeaderEpoch, event.leaderEpoch)
          : context.localLeaderEpoch,
      proactiveBumpMin: null,
    })),
    // Effects: read-only flag and LastMirrorEpochs.
    markReadOnly: effect<EffectParams>(),
    clearReadOnly: effect<EffectParams>(),
    clearLastMirrorEpoch: effect<EffectParams>(),
    recordLastMirrorEpoch: effect<RecordLastMirrorEpochParams>(),
    // Effects: PREPARING.
    checkMirrorLoop: effect<EffectParams>(),
    lookupLastMirrorEpoch: effect<EffectParams>(),
    truncateFully: effect<EffectParams>(),
    truncateToEpoch: effect<TruncateToEpochParams>(),
    cancelTruncation: effect<EffectParams>(),
    awaitIsrTruncated: effect<EffectParams>(),
    // Effects: fetcher and leader epoch.
    addFetcher: effect<EffectParams>(),
    removeFetcher: effect<EffectParams>(),
    holdAppends: effect<EffectParams>(),
    releaseAppends: effect<EffectParams>(),
    bumpLeaderEpoch: effect<BumpLeaderEpochParams>(),
    // Effects: STOPPING.
    abortOpenTransactions: effect<EffectParams>(),
    appendPidReset: effect<EffectParams>(),
    // Effects: FAILED.
    scheduleRetry: effect<ScheduleRetryParams>(),
    cancelRetryTimer: effect<EffectParams>(),
  },
  guards: {
    noPendingCommit: ({ context }) => context.pending === null,
    currentEpoch: ({ context, event }) =>
      "stateEpoch" in event && event.stateEpoch === context.record.stateEpoch,
    pendingMatches: ({ context, event }) =>
      context.pending !== null &&
      "stateEpoch" in event &&
      event.stateEpoch === context.pending.record.stateEpoch,
    hasDeferredFailure: ({ context }) => context.deferredFailure !== null,
    pendingIsNonRetryable: ({ context }) => (context.pending?.record.retryAttempt ?? 0) < 0,
    pendingPauseRequested: ({ context }) => context.pending?.pauseRequested === true,
    recoversTo: ({ context }, params: { route: RecoveryRoute }) => recoveryRoute(context) === params.route,
    previousStateWasFailover: ({ context }) =>
      context.record.previousState === "STOPPING" || context.record.previousState === "STOPPED",
    retryResumesMirroring: ({ context }) =>
      context.aligned && RESUMES_MIRRORING.has(context.record.previousState),
    retryResumesPaused: ({ context }) => context.aligned && RESUMES_PAUSED.has(context.record.previousState),
    alignedLog: ({ context }) => context.aligned,
    // Spec §4's failover writes its markers; a partition removed while FAILED writes them only when its log
    // holds mirrored data (a loop refused in PREPARING, or a topic failed again after STOPPED, holds none).
    failoverWritesMarkers: ({ context }) =>
      context.holdsMirroredData || context.record.previousState !== "FAILED",
    lmeUnknown: ({ event }) => event.type === "LME_FOUND" && event.lme < 0,
    batchEpochAboveLocal: ({ context, event }) =>
      event.type === "EPOCH_OBSERVED" && event.batchEpoch > localEpochWith(context, event),
    proactiveBumpDue: ({ context, event }) =>
      event.type === "EPOCH_OBSERVED" &&
      context.proactiveBumpMin === null &&
      event.batchEpoch >= localEpochWith(context, event) - LEADER_EPOCH_BUMP_THRESHOLD,
    epochsAdvance: ({ context, event }) =>
      event.type === "EPOCH_OBSERVED" &&
      (event.batchEpoch > context.highestBatchEpoch || event.localLeaderEpoch > context.localLeaderEpoch),
    bumpSatisfies: ({ context, event }, params: { bump: "proactive" | "fence" | "failover" }) => {
      if (event.type !== "EPOCH_BUMPED" || event.stateEpoch !== context.record.stateEpoch) return false;
      const min =
        params.bump === "proactive"
          ? context.proactiveBumpMin
          : params.bump === "fence"
            ? mirroringBumpMin(context)
            : failoverBumpMin(context);
      return min !== null && event.leaderEpoch >= min;
    },
  },
}).createMachine({
  id: "mirrorPartition",
  context: ({ input }) => initialContext(input),
  initial: "recovering",
  on: {
    // Another coordinator leads `__mirror_state` now: stop here, run nothing (the runtime stops the actor).
    FENCED: { guard: "pendingMatches", target: ".fenced" },
  },
  states: {
    recovering: {
      description:
        "Rehydrate from the __mirror_state record: enter its state so the effects its commit started run again.",
      always: RECOVERY_ROUTES.map(({ route, target }) => ({
        guard: { type: "recoversTo", params: { route } },
        target: `#mirrorPartition.${target}`,
        actions:
          route === "MIRRORING"
            ? [fx("addFetcher")]
            : route === "MIRRORING_PAUSE_REQUESTED"
              ? [{ type: "prepareCommit", params: { to: "PAUSING" } }]
              : [],
      })),
    },
    UNKNOWN: {
      description: "No cached state: the broker just became leader. Not persisted.",
      initial: "idle",
      states: {
        idle: { on: { START: change("PREPARING", []) } },
        committing_PREPARING: committing("UNKNOWN", "PREPARING"),
        committing_FAILED: committing("UNKNOWN", "FAILED"),
      },
      on: failures,
    },
    PREPARING: {
      description:
        "Refuse a mirror loop, look up the LME on the source, truncate to it (not an aligned log), wait for the ISR.",
      entry: { type: "markReadOnly", params: epoch },
      initial: "checkingMirrorLoop",
      states: {
        checkingMirrorLoop: {
          entry: { type: "checkMirrorLoop", params: epoch },
          on: {
            MIRROR_LOOP_CHECKED: [
              // A start of a FAILED partition whose log is still a copy of this source: nothing to truncate
              // (the source may have moved on, never back below what we hold: the fetcher's divergence
              // handling trims any difference). Truncating here would drop records the source still has.
              {
                guard: and(["currentEpoch", "alignedLog"]),
                target: "awaitingIsrTruncation",
                actions: ALIGNED,
              },
              { guard: "currentEpoch", target: "lookingUpLastMirrorEpoch" },
            ],
            MIRROR_LOOP_FOUND: change("FAILED"),
          },
        },
        lookingUpLastMirrorEpoch: {
          entry: { type: "lookupLastMirrorEpoch", params: epoch },
          on: {
            LME_FOUND: [
              {
                guard: and(["currentEpoch", "lmeUnknown"]),
                target: "truncatingFully",
                actions: "noteSourceLastMirrorEpoch",
              },
              { guard: "currentEpoch", target: "truncatingToEpoch", actions: "noteSourceLastMirrorEpoch" },
            ],
          },
        },
        truncatingFully: {
          description:
            "LME -1 (the source does not know one): truncate fully, start at the source's log start.",
          entry: { type: "truncateFully", params: epoch },
          on: {
            TRUNCATED: { guard: "currentEpoch", target: "awaitingIsrTruncation", actions: ALIGNED },
            ...cancelling("PREPARING", "cancelTruncation"),
          },
        },
        truncatingToEpoch: {
          description: "Truncate the local log to the end offset of the source's LME.",
          entry: {
            type: "truncateToEpoch",
            params: ({ context }: Args): TruncateToEpochParams => ({
              stateEpoch: context.record.stateEpoch,
              lme: context.sourceLastMirrorEpoch,
            }),
          },
          on: {
            TRUNCATED: { guard: "currentEpoch", target: "awaitingIsrTruncation", actions: ALIGNED },
            ...cancelling("PREPARING", "cancelTruncation"),
          },
        },
        awaitingIsrTruncation: {
          entry: { type: "awaitIsrTruncated", params: epoch },
          on: { ISR_TRUNCATED: change("MIRRORING") },
        },
        committing_MIRRORING: committing("PREPARING", "MIRRORING"),
        committing_STOPPING: committing("PREPARING", "STOPPING"),
        committing_FAILED: committing("PREPARING", "FAILED"),
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    MIRRORING: {
      description: "A fetcher replicates from the source; the topic is read-only.",
      entry: { type: "markReadOnly", params: epoch },
      initial: "replicating",
      states: {
        replicating: {
          on: {
            PAUSE: change("PAUSING", []),
            EPOCH_OBSERVED: [
              {
                guard: "batchEpochAboveLocal",
                target: "committing_EPOCH_FENCING",
                actions: ["noteObservedEpochs", { type: "prepareCommit", params: { to: "EPOCH_FENCING" } }],
              },
              {
                guard: "proactiveBumpDue",
                actions: [
                  "noteObservedEpochs",
                  "noteProactiveBump",
                  {
                    type: "bumpLeaderEpoch",
                    params: ({ context }: Args): BumpLeaderEpochParams => ({
                      stateEpoch: context.record.stateEpoch,
                      minLeaderEpoch: context.proactiveBumpMin ?? mirroringBumpMin(context),
                    }),
                  },
                ],
              },
              { guard: "epochsAdvance", actions: "noteObservedEpochs" },
            ],
            EPOCH_BUMPED: {
              guard: { type: "bumpSatisfies", params: { bump: "proactive" } },
              actions: "noteLeaderEpochBumped",
            },
          },
        },
        committing_EPOCH_FENCING: committing("MIRRORING", "EPOCH_FENCING"),
        committing_PAUSING: committing("MIRRORING", "PAUSING"),
        committing_STOPPING: committing("MIRRORING", "STOPPING"),
        committing_FAILED: committing("MIRRORING", "FAILED"),
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    EPOCH_FENCING: {
      description: "A fetched batch carries a leader epoch above the local one: appends wait for the bump.",
      entry: [
        { type: "markReadOnly", params: epoch },
        { type: "holdAppends", params: epoch },
      ],
      initial: "bumpingLeaderEpoch",
      states: {
        bumpingLeaderEpoch: {
          entry: {
            type: "bumpLeaderEpoch",
            params: ({ context }: Args): BumpLeaderEpochParams => ({
              stateEpoch: context.record.stateEpoch,
              minLeaderEpoch: mirroringBumpMin(context),
            }),
          },
          on: {
            EPOCH_BUMPED: {
              guard: { type: "bumpSatisfies", params: { bump: "fence" } },
              target: "committing_MIRRORING",
              actions: ["noteLeaderEpochBumped", { type: "prepareCommit", params: { to: "MIRRORING" } }],
            },
          },
        },
        committing_MIRRORING: committing("EPOCH_FENCING", "MIRRORING"),
        committing_STOPPING: committing("EPOCH_FENCING", "STOPPING"),
        committing_FAILED: committing("EPOCH_FENCING", "FAILED"),
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    PAUSING: {
      description: "Pause requested; the fetcher is being removed.",
      entry: { type: "markReadOnly", params: epoch },
      initial: "removingFetcher",
      states: {
        removingFetcher: {
          entry: { type: "removeFetcher", params: epoch },
          on: { FETCHER_REMOVED: change("PAUSED") },
        },
        committing_PAUSED: committing("PAUSING", "PAUSED"),
        committing_STOPPING: committing("PAUSING", "STOPPING"),
        committing_FAILED: committing("PAUSING", "FAILED"),
      },
      // STOP while PAUSING is the spec's race guard.
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    PAUSED: {
      description: "No fetcher and no metadata sync; still read-only. Resume goes straight to MIRRORING.",
      entry: { type: "markReadOnly", params: epoch },
      initial: "idle",
      states: {
        idle: { on: { RESUME: change("MIRRORING", []) } },
        committing_MIRRORING: committing("PAUSED", "MIRRORING"),
        committing_STOPPING: committing("PAUSED", "STOPPING"),
        committing_FAILED: committing("PAUSED", "FAILED"),
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    STOPPING: {
      description:
        "Failover: every step is idempotent, so re-entering STOPPING restarts the sequence safely; the LME is captured once.",
      entry: { type: "markReadOnly", params: epoch },
      initial: "removingFetcher",
      states: {
        removingFetcher: {
          entry: { type: "removeFetcher", params: epoch },
          on: {
            FETCHER_REMOVED: [
              {
                guard: and(["currentEpoch", "failoverWritesMarkers"]),
                target: "recordingLmeAndBumpingEpoch",
                actions: "captureLastMirrorEpoch",
              },
              {
                guard: "currentEpoch",
                target: "recordingLmeAndBumpingEpochOnly",
                actions: "captureLastMirrorEpoch",
              },
            ],
          },
        },
        recordingLmeAndBumpingEpoch: recordingLmeAndBumpingEpoch("abortingTransactions"),
        recordingLmeAndBumpingEpochOnly: {
          ...recordingLmeAndBumpingEpoch({
            target: "committing_STOPPED",
            actions: { type: "prepareCommit", params: { to: "STOPPED" } },
          }),
          description:
            "Removed while FAILED, and the log holds no mirrored data (e.g. a loop refused in PREPARING): its producer state is the topic's own, so no ABORT marker and no PID reset (they would abort a live transaction and fail a live idempotent producer).",
        },
        abortingTransactions: {
          entry: { type: "abortOpenTransactions", params: epoch },
          on: { TXNS_ABORTED: { guard: "currentEpoch", target: "writingPidReset" } },
        },
        writingPidReset: {
          entry: { type: "appendPidReset", params: epoch },
          on: { PID_RESET_APPENDED: change("STOPPED") },
        },
        committing_STOPPED: committing("STOPPING", "STOPPED"),
        committing_FAILED: committing("STOPPING", "FAILED"),
      },
      on: failures,
    },
    STOPPED: {
      description: "The topic is writable; the last mirror epoch is persisted.",
      entry: { type: "clearReadOnly", params: epoch },
      initial: "idle",
      states: {
        idle: { on: { START: change("PREPARING", []) } },
        committing_PREPARING: committing("STOPPED", "PREPARING"),
        committing_FAILED: committing("STOPPED", "FAILED"),
      },
      on: failures,
    },
    FAILED: {
      description: "Keeps the message, the previous state and the attempt; retries with backoff or waits.",
      entry: { type: "removeFetcher", params: epoch },
      initial: "backingOff",
      states: {
        backingOff: {
          entry: {
            type: "scheduleRetry",
            params: ({ context }: Args): ScheduleRetryParams => ({
              stateEpoch: context.record.stateEpoch,
              attempt: context.record.retryAttempt,
              delayMs: retryBackoffDelayMs(context.record.retryAttempt, context.retryJitter, context.retry),
            }),
          },
          on: {
            RETRY_TIMER_FIRED: [
              // Spec §4: back to PREPARING "or the previous state where that is safe". A failover that failed
              // (or a stopped topic that failed) resumes STOPPING: its steps are idempotent and it ends in
              // STOPPED again. A log still a copy of the source resumes where it was, without truncating:
              // MIRRORING fetches from the local log end (divergence handling trims any difference), a
              // paused one stays PAUSED. Anything else (never aligned) starts over in PREPARING.
              change("STOPPING", ["currentEpoch", "previousStateWasFailover"]),
              change("MIRRORING", ["currentEpoch", "retryResumesMirroring"]),
              change("PAUSED", ["currentEpoch", "retryResumesPaused"]),
              change("PREPARING"),
            ],
            START: {
              target: "committing_PREPARING",
              actions: [fx("cancelRetryTimer"), { type: "prepareCommit", params: { to: "PREPARING" } }],
            },
            ...cancelling("FAILED", "cancelRetryTimer"),
          },
        },
        awaitingOperator: {
          description: "Non-retryable or out of attempts: only remove (STOP), then add back, moves on.",
        },
        committing_PREPARING: committing("FAILED", "PREPARING"),
        committing_MIRRORING: committing("FAILED", "MIRRORING"),
        committing_PAUSED: committing("FAILED", "PAUSED"),
        committing_STOPPING: committing("FAILED", "STOPPING"),
        committing_FAILED: committing("FAILED", "FAILED"),
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    fenced: {
      description: "Another coordinator leads __mirror_state: this actor is done and runs nothing.",
      type: "final",
    },
  },
});
