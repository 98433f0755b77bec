import { and, assign, not, setup } from "xstate";
import { alignmentLastMirrorEpoch } from "./alignment-epoch";
import { effect } from "./effect";
import { initialContext } from "./initial-context";
import {
  failoverMinLeaderEpoch,
  LEADER_EPOCH_BUMP_INCREMENT,
  LEADER_EPOCH_BUMP_THRESHOLD,
  LIFECYCLE_STATES,
  type LifecycleState,
  type MirrorPartitionStateRecord,
} from "./lifecycle";
import type {
  AppendPidResetParams,
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
import { buildPendingCommit, causeOf, retryPauseRequested, startsNewEpisode } from "./pending-commit";
import { COMMIT_RETRY_BACKOFF, retryBackoffDelayMs } from "./retry-backoff";

type Args = { readonly context: MirrorPartitionContext; readonly event: MirrorPartitionEvent };

/** The `stateEpoch` an effect of the committed state is requested under. */
const epoch = ({ context }: Args): EffectParams => ({ stateEpoch: context.record.stateEpoch });

/** `minLeaderEpoch` of a bump while MIRRORING or EPOCH_FENCING: above the local epoch and every batch. */
function mirroringBumpMin(context: MirrorPartitionContext): number {
  return Math.max(context.localLeaderEpoch, context.highestBatchEpoch) + LEADER_EPOCH_BUMP_INCREMENT;
}

/** `minLeaderEpoch` of the failover bump (spec §4 STOPPING step 2): above the LME and the local epoch. */
function failoverBumpMin(context: MirrorPartitionContext): number {
  return failoverMinLeaderEpoch(context.lastMirrorEpoch, context.localLeaderEpoch);
}

/**
 * A failover over a log recorded as the topic's own (a re-add's PREPARING, or FAILED, before a recorded
 * truncation, with the LME L of the earlier failover) whose leader's latest epoch, read once the fetcher is
 * gone (before this failover writes), is at most L: as `recoveredCutUnrecorded` reads at a coordinator's
 * load, the truncation cut the log and no record says so (the coordinator was lost first, and its successor
 * could not read the log then: no leader). The log holds the source's producer state.
 */
function cutSeenAtFailover(context: MirrorPartitionContext, event: MirrorPartitionEvent): boolean {
  return (
    event.type === "FETCHER_REMOVED" &&
    !context.holdsMirroredData &&
    !context.aligned &&
    context.lastMirrorEpoch >= 0 &&
    event.latestMirroredEpoch <= context.lastMirrorEpoch
  );
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
  { route: "MIRRORING_PAUSE_REQUESTED", target: "committing" },
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
      return context.pauseRequested ? "MIRRORING_PAUSE_REQUESTED" : "MIRRORING";
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

/** An effect a commit runs that takes only the committed `stateEpoch`. */
type CommitEffect = ReturnType<
  typeof fx<
    "markReadOnly" | "clearReadOnly" | "holdAppends" | "releaseAppends" | "addFetcher" | "removeFetcher"
  >
>;

/**
 * What entering each lifecycle state starts (its `entry`). A commit that must not enter the state it commits
 * (a failure deferred behind the append starts the FAILED commit at once) runs these on its edge instead,
 * so the effects are the same whichever way the state is reached.
 */
const LIFECYCLE_ENTRY = {
  UNKNOWN: [],
  PREPARING: [fx("markReadOnly")],
  MIRRORING: [fx("markReadOnly")],
  EPOCH_FENCING: [fx("markReadOnly"), fx("holdAppends")],
  PAUSING: [fx("markReadOnly")],
  PAUSED: [fx("markReadOnly")],
  STOPPING: [fx("markReadOnly")],
  STOPPED: [fx("clearReadOnly")],
  FAILED: [fx("removeFetcher")],
} as const satisfies { readonly [S in LifecycleState]: readonly CommitEffect[] };

/**
 * Effects a commit runs when it leaves a lifecycle state (what the state started and only it undoes), and the
 * states that state's changes go to (its chart's `prepareCommit` targets and FAILED).
 */
const CLEANUP_ON_LEAVE = [
  {
    from: "EPOCH_FENCING",
    to: ["MIRRORING", "STOPPING", "FAILED"],
    effects: [fx("releaseAppends")],
  },
] as const satisfies readonly {
  from: LifecycleState;
  to: readonly LifecycleState[];
  effects: readonly CommitEffect[];
}[];

type StatesGuard = {
  readonly type: "commitsTo" | "committedIn";
  readonly params: { states: LifecycleState[] };
};

/** The pending change goes to one of `states`. */
function commitsTo(...states: LifecycleState[]): StatesGuard {
  return { type: "commitsTo", params: { states } };
}

/** The committed state (the one the pending change leaves) is one of `states`. */
function committedIn(...states: LifecycleState[]): StatesGuard {
  return { type: "committedIn", params: { states } };
}

/** A guard of a COMMITTED edge (as objects, so `and` can take a list built at definition time). */
type CommitGuard =
  | {
      readonly type:
        | "pendingMatches"
        | "hasDeferredFailure"
        | "pendingPauseRequested"
        | "pendingIsNonRetryable";
    }
  | StatesGuard;

/** All of `guards` hold; names stand for parameterless guards. */
function all(...guards: (CommitGuard | Exclude<CommitGuard["type"], StatesGuard["type"]>)[]) {
  return and(guards.map((g): CommitGuard => (typeof g === "string" ? { type: g } : g)));
}

/** An action of a COMMITTED edge. */
type CommitAction =
  | "applyCommit"
  | "prepareDeferredFailure"
  | CommitEffect
  | { readonly type: "prepareCommit"; readonly params: { readonly to: LifecycleState } };

/** A COMMITTED transition of the commit step. */
interface CommitEdge {
  readonly guard: ReturnType<typeof all>;
  readonly target: string;
  readonly reenter?: boolean;
  readonly actions: readonly CommitAction[];
}

/**
 * COMMITTED with a failure deferred behind the append: apply the commit, run what leaving the old state and
 * entering the new one would run (without entering it: its steps would start), then commit FAILED from the
 * new state at once. The new state's entry is skipped when it is the state left (FAILED -> FAILED stays).
 */
function deferredFailureEdges(): CommitEdge[] {
  const edge = (guards: Parameters<typeof all>, actions: readonly CommitAction[]): CommitEdge => ({
    guard: all("pendingMatches", "hasDeferredFailure", ...guards),
    target: "#mirrorPartition.committing",
    reenter: true,
    actions,
  });
  const edges = CLEANUP_ON_LEAVE.flatMap((c) =>
    c.to.map((to) =>
      edge(
        [commitsTo(to), committedIn(c.from)],
        [...c.effects, "applyCommit", "prepareDeferredFailure", ...LIFECYCLE_ENTRY[to]],
      ),
    ),
  );
  edges.push(edge([commitsTo("FAILED"), committedIn("FAILED")], ["applyCommit", "prepareDeferredFailure"]));
  // One edge per distinct entry: the states that start the same effects share it.
  const byEntry = new Map<string, LifecycleState[]>();
  for (const to of LIFECYCLE_STATES) {
    if (to === "UNKNOWN") continue; // never committed
    const key = LIFECYCLE_ENTRY[to].map((a) => a.type).join(",");
    byEntry.set(key, [...(byEntry.get(key) ?? []), to]);
  }
  for (const states of byEntry.values()) {
    const entry = LIFECYCLE_ENTRY[states[0] as LifecycleState];
    edges.push(edge([commitsTo(...states)], ["applyCommit", "prepareDeferredFailure", ...entry]));
  }
  return edges;
}

/**
 * COMMITTED: the pending change is durable. Run what leaving the old state runs, apply the commit and enter
 * the state it goes to (its entry starts its effects). The guards read the change (`pending.to`) and the
 * state it leaves (`record.state`, the old one until `applyCommit`); the first that holds is taken.
 */
function committedEdges(): CommitEdge[] {
  const enter = (to: LifecycleState, target: string, guards: Parameters<typeof all> = []): CommitEdge[] => [
    ...CLEANUP_ON_LEAVE.filter((c) => (c.to as readonly LifecycleState[]).includes(to)).map(
      (c): CommitEdge => ({
        guard: all("pendingMatches", commitsTo(to), committedIn(c.from), ...guards),
        target: `#mirrorPartition.${target}`,
        actions: [...c.effects, "applyCommit"],
      }),
    ),
    {
      guard: all("pendingMatches", commitsTo(to), ...guards),
      target: `#mirrorPartition.${target}`,
      actions: ["applyCommit"],
    },
  ];
  return [
    ...deferredFailureEdges(),
    // PREPARING (or a retry) completed for a partition asked to pause: MIRRORING commits and PAUSING is
    // requested at once, without a fetcher (MIRRORING's entry runs on the edge).
    {
      guard: all(
        "pendingMatches",
        commitsTo("MIRRORING"),
        committedIn("PREPARING", "FAILED"),
        "pendingPauseRequested",
      ),
      target: "#mirrorPartition.committing",
      reenter: true,
      actions: [
        "applyCommit",
        { type: "prepareCommit", params: { to: "PAUSING" } },
        ...LIFECYCLE_ENTRY.MIRRORING,
      ],
    },
    // Mirroring starts or resumes: add the fetcher (back from EPOCH_FENCING it was never removed).
    {
      guard: all("pendingMatches", commitsTo("MIRRORING"), committedIn("PREPARING", "FAILED", "PAUSED")),
      target: "#mirrorPartition.MIRRORING",
      actions: ["applyCommit", fx("addFetcher")],
    },
    ...enter("FAILED", "FAILED.awaitingOperator", ["pendingIsNonRetryable"]),
    ...enter("FAILED", "FAILED.backingOff"),
    ...LIFECYCLE_STATES.filter((s) => s !== "UNKNOWN" && s !== "FAILED").flatMap((to) => enter(to, to)),
  ];
}

/**
 * A failure applied right away (no append in flight): cancel `cancel` first when given, then commit FAILED.
 */
function failNow(cancel: "cancelCommitRetry" | "cancelRetryTimer" | "cancelTruncation") {
  const cancelAction =
    cancel === "cancelCommitRetry" ? { type: cancel, params: pendingEpoch } : { type: cancel, params: epoch };
  const actions = [cancelAction, { type: "prepareCommit", params: { to: "FAILED" } }] as const;
  const target = "#mirrorPartition.committing";
  return {
    FAIL: { guard: "notFailingOver", target, reenter: true, actions },
    EFFECT_FAILED: { guard: and(["currentEpoch", "notFailingOver"]), target, reenter: true, actions },
  } as const;
}

/**
 * The commit step, shared by every lifecycle change (spec §6: a change takes effect once its record is
 * durable): append the record, then (and only then) enter the state it names. While it waits, the
 * committed state is still `context.record.state`. A transient failure re-appends the same record after a
 * backoff; a failure of the partition that arrives meanwhile is deferred until the append settles; FENCED
 * (handled at the root) ends the actor.
 */
const committing = {
  description:
    "The commit step of every lifecycle change: append the __mirror_state record, enter its state only on COMMITTED.",
  initial: "appending",
  states: {
    appending: {
      entry: {
        type: "appendStateRecord",
        params: ({ context }: Args): AppendStateRecordParams =>
          (context.pending as { record: MirrorPartitionStateRecord }).record,
      },
      on: {
        COMMITTED: committedEdges(),
        COMMIT_FAILED: [
          {
            // Only when the record surely missed the log: one that may be there commits later, and a FAILED
            // record at its stateEpoch would then follow it (soak min-insync FC_SEED=477: MIRRORING@2, then
            // FAILED@2). That one is appended again first, and the failure follows its commit.
            guard: and(["pendingMatches", "hasDeferredFailure", not("commitMayHaveLanded")]),
            target: "#mirrorPartition.committing",
            reenter: true,
            actions: "prepareDeferredFailure",
          },
          { guard: "pendingMatches", target: "retrying", actions: "noteCommitFailure" },
        ],
        // A retryable failure adds nothing to a failure for good being appended (and would replace its
        // message once that commits): dropped, as in `retrying` and FAILED.awaitingOperator.
        FAIL: [
          { guard: and(["failureIsRetryable", "pendingIsNonRetryable"]), actions: [] },
          { guard: "notFailingOver", actions: "deferFailure" },
        ],
        EFFECT_FAILED: [
          { guard: and(["failureIsRetryable", "pendingIsNonRetryable"]), actions: [] },
          { guard: and(["currentEpoch", "notFailingOver"]), actions: "deferFailure" },
        ],
      },
    },
    retrying: {
      entry: {
        type: "scheduleCommitRetry",
        params: ({ context }: Args): ScheduleRetryParams => ({
          stateEpoch: pendingEpoch({ context, event: { type: "START" } }).stateEpoch,
          attempt: context.commitAttempt,
          delayMs: retryBackoffDelayMs(context.commitAttempt, context.commitJitter, COMMIT_RETRY_BACKOFF),
        }),
      },
      on: {
        COMMIT_RETRY_TIMER_FIRED: {
          guard: "pendingMatches",
          target: "appending",
          actions: "noteCommitRetry",
        },
        // A record that may be on the log already keeps its stateEpoch: the failure waits for its commit.
        // A retryable failure never takes the place of a failure for good waiting to be appended again.
        FAIL: [
          { guard: and(["failureIsRetryable", "pendingIsNonRetryable"]), actions: [] },
          { guard: and(["notFailingOver", "commitMayHaveLanded"]), actions: "deferFailure" },
          failNow("cancelCommitRetry").FAIL,
        ],
        EFFECT_FAILED: [
          { guard: and(["failureIsRetryable", "pendingIsNonRetryable"]), actions: [] },
          { guard: and(["currentEpoch", "notFailingOver", "commitMayHaveLanded"]), actions: "deferFailure" },
          failNow("cancelCommitRetry").EFFECT_FAILED,
        ],
      },
    },
  },
} as const;

type ChangeGuard =
  | "batchEpochAboveLocal"
  | "previousStateWasFailover"
  | "retryResumesMirroring"
  | "retryResumesPaused"
  | "currentEpoch";

/** A lifecycle change from a step: record what will be appended, then wait in `committing`. */
function change<const To extends LifecycleState>(
  to: To,
  guard: ChangeGuard | readonly ChangeGuard[] = "currentEpoch",
) {
  return {
    // `[]`: an unguarded change (a command); one name or several (all must hold).
    guard: typeof guard === "string" ? guard : guard.length === 0 ? undefined : and(guard as ChangeGuard[]),
    target: "#mirrorPartition.committing",
    actions: { type: "prepareCommit", params: { to } },
  } as const;
}

/**
 * Where a FAILED partition's retry goes (its timer, or the operator's recover). Spec §4: back to PREPARING
 * "or the previous state where that is safe". A failover that failed (or a stopped topic that failed)
 * resumes STOPPING: its steps are idempotent and it ends in STOPPED again. A log still a copy of the source
 * resumes where it was, without truncating: MIRRORING fetches from the local log end (divergence handling
 * trims any difference), a paused one stays PAUSED. Anything else (never aligned) starts over in PREPARING.
 * `guards` hold for every route; `cancel` runs first on each (the retry timer a recover overtakes).
 */
function retryRoutes(guards: readonly ChangeGuard[], cancel?: "cancelRetryTimer") {
  const route = <const To extends LifecycleState>(to: To, more: readonly ChangeGuard[]) => {
    const c = change(to, [...guards, ...more]);
    return cancel === undefined ? c : { ...c, actions: [fx(cancel), c.actions] as const };
  };
  return [
    route("STOPPING", ["previousStateWasFailover"]),
    route("MIRRORING", ["retryResumesMirroring"]),
    route("PAUSED", ["retryResumesPaused"]),
    route("PREPARING", []),
  ];
}

/**
 * A lifecycle change handled by the lifecycle state itself, whatever step it is in. Unguarded: no change can
 * be waiting here, since `pending` is set exactly while the actor is in `committing` (every `prepareCommit`
 * enters it, every edge out of it applies the commit), and `committing` defers failures itself.
 */
function changeFromAnyStep<const To extends LifecycleState>(to: To) {
  return {
    target: "#mirrorPartition.committing",
    actions: { type: "prepareCommit", params: { to } },
  } as const;
}

/** A step that started cancellable work: leaving it on STOP or a failure cancels that work first. */
function cancelling(cancel: "cancelTruncation" | "cancelRetryTimer") {
  return {
    STOP: {
      target: "#mirrorPartition.committing",
      actions: [fx(cancel), { type: "prepareCommit", params: { to: "STOPPING" } }] as const,
    },
    ...failNow(cancel),
  } as const;
}

/**
 * STOPPING step 2 (spec §4): record the LME and bump the leader epoch above it, in parallel; then `onDone`:
 * the markers (step 3) for a log that holds mirrored data; for one that holds none, ABORT markers only over
 * hanging transactions (`abortingHangingTransactions`), then STOPPED.
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

/**
 * FAILED's one effect is its entry's removeFetcher, and it fails only when no broker leads the data
 * partition: then no broker runs its fetcher (the old leader dropped it with its leadership or its crash), so
 * nothing is left to undo. Committing FAILED again for it would enter FAILED and run it again at once: a loop
 * without delay, appending a `__mirror_state` record each time, for as long as the partition has no leader.
 * So FAILED keeps its epoch; the retry after the backoff (or the operator) moves on.
 */
const ignoreFailedEntryFailure = { guard: "currentEpoch", actions: [] } as const;

/** Every lifecycle state may fail (spec §4: FAILED is valid from any state). */
const failures = {
  FAIL: changeFromAnyStep("FAILED"),
  EFFECT_FAILED: { ...changeFromAnyStep("FAILED"), guard: "currentEpoch" },
} as const;

/**
 * The mirror partition actor of spec §4: one per mirrored topic-partition.
 *
 * Top-level states are the lifecycle states (plus `recovering`, the entry point that rehydrates from a
 * `__mirror_state` record, `committing`, the commit step every lifecycle change goes through, and `fenced`,
 * the end when another coordinator took over). A change prepares its record and enters `committing`, which
 * requests `appendStateRecord` and waits; COMMITTED enters the state the change names and starts its
 * effects; COMMIT_FAILED re-appends the same record after a backoff. While a change waits the committed
 * state is `context.record.state`. Every effect
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
      commitMaybeAppended: false,
    })),
    prepareDeferredFailure: assign(({ context }) => ({
      pending: buildPendingCommit(context, "FAILED", {
        kind: "failure",
        failure: context.deferredFailure as MirrorPartitionFailure,
      }),
      deferredFailure: null,
      commitAttempt: 0,
      commitMaybeAppended: false,
    })),
    applyCommit: assign(({ context }) => {
      const pending = context.pending as NonNullable<MirrorPartitionContext["pending"]>;
      const preparing = pending.to === "PREPARING";
      const newEpisode = startsNewEpisode(context, pending.to);
      return {
        highestBatchEpoch: newEpisode ? -1 : context.highestBatchEpoch,
        record: pending.record,
        retryJitter: pending.retryJitter,
        pauseRequested: pending.pauseRequested,
        pending: null,
        proactiveBumpMin: null,
        commitAttempt: 0,
        commitMaybeAppended: false,
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
      const failure: MirrorPartitionFailure = {
        message: event.message,
        retryable: event.retryable,
        random: event.random,
        ...(event.afterProgress === true ? { afterProgress: true } : {}),
      };
      return { deferredFailure: kept === null || (kept.retryable && !failure.retryable) ? failure : kept };
    }),
    noteCommitFailure: assign(({ context, event }) => ({
      commitJitter: event.type === "COMMIT_FAILED" ? event.random : 0,
      commitMaybeAppended:
        context.commitMaybeAppended || (event.type === "COMMIT_FAILED" && event.maybeAppended === true),
    })),
    noteCommitRetry: assign(({ context }) => ({ commitAttempt: context.commitAttempt + 1 })),
    appendStateRecord: effect<AppendStateRecordParams>(),
    scheduleCommitRetry: effect<ScheduleRetryParams>(),
    cancelCommitRetry: effect<EffectParams>(),
    // Bookkeeping from results and observations (never touches `record`: only a commit does).
    // The LME PREPARING aligns to: the later failover's, the source's or this partition's own on this
    // mirror (alignmentLastMirrorEpoch); the log up to the end of that epoch is a copy of the source's, and
    // fetch divergence trims the rest.
    noteSourceLastMirrorEpoch: assign(({ context, event }) => ({
      sourceLastMirrorEpoch:
        event.type === "LME_FOUND"
          ? alignmentLastMirrorEpoch(event.lme, context.lastMirrorEpoch)
          : context.lastMirrorEpoch,
    })),
    // Spec §4 STOPPING step 2, once per failover: the log's latest epoch is the LME only when the log is a
    // copy of the source (aligned); otherwise its latest batches are local ones, so keep the recorded LME.
    // STOPPING appends locally next, so the log is no longer aligned once the LME is captured.
    // A log found cut to the recorded LME (`cutSeenAtFailover`) holds mirrored data: as `noteAligned`, the
    // STOPPED record's leaderEpoch (>= 0) carries that on.
    captureLastMirrorEpoch: assign(({ context, event }) => ({
      ...(cutSeenAtFailover(context, event)
        ? { holdsMirroredData: true, highestBatchEpoch: Math.max(context.highestBatchEpoch, 0) }
        : {}),
      ...(context.lmeCaptured || event.type !== "FETCHER_REMOVED"
        ? {}
        : {
            lastMirrorEpoch: context.aligned ? event.latestMirroredEpoch : context.lastMirrorEpoch,
            lmeCaptured: true,
            aligned: false,
          }),
    })),
    // PREPARING's truncation is done (see ALIGNED).
    // The log is now a copy of the source's: the producer state it holds came from the source's batches.
    // The record's leaderEpoch (at least 0 from now on) carries that to a recovered coordinator.
    noteAligned: assign(({ context }) => ({
      aligned: true,
      lastMirrorEpoch: -1,
      holdsMirroredData: true,
      highestBatchEpoch: Math.max(context.highestBatchEpoch, 0),
    })),
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
    abortHangingTransactions: effect<EffectParams>(),
    appendPidReset: effect<AppendPidResetParams>(),
    // Effects: FAILED.
    scheduleRetry: effect<ScheduleRetryParams>(),
    cancelRetryTimer: effect<EffectParams>(),
  },
  guards: {
    currentEpoch: ({ context, event }) =>
      "stateEpoch" in event && event.stateEpoch === context.record.stateEpoch,
    pendingMatches: ({ context, event }) =>
      context.pending !== null &&
      "stateEpoch" in event &&
      event.stateEpoch === context.pending.record.stateEpoch,
    hasDeferredFailure: ({ context }) => context.deferredFailure !== null,
    commitMayHaveLanded: ({ context, event }) =>
      context.commitMaybeAppended || (event.type === "COMMIT_FAILED" && event.maybeAppended === true),
    // A failover waiting for its STOPPING record: a failure that arrives now belongs to the state it leaves
    // (e.g. PREPARING's mirror-loop check against a source that is down) and must neither fail nor undo
    // the failover, which needs nothing from the source (spec §4). STOPPING's own steps start after it.
    notFailingOver: ({ context }) => context.pending?.to !== "STOPPING",
    failureIsRetryable: ({ event }) =>
      (event.type === "FAIL" || event.type === "EFFECT_FAILED") && event.retryable,
    pendingIsNonRetryable: ({ context }) => (context.pending?.record.retryAttempt ?? 0) < 0,
    pendingPauseRequested: ({ context }) => context.pending?.pauseRequested === true,
    commitsTo: ({ context }, params: { states: readonly LifecycleState[] }) =>
      context.pending !== null && params.states.includes(context.pending.to),
    committedIn: ({ context }, params: { states: readonly LifecycleState[] }) =>
      params.states.includes(context.record.state),
    recoversTo: ({ context }, params: { route: RecoveryRoute }) => recoveryRoute(context) === params.route,
    previousStateWasFailover: ({ context }) =>
      context.record.previousState === "STOPPING" || context.record.previousState === "STOPPED",
    // A log still a copy of the source resumes MIRRORING or PAUSED, as the topic's `mirror.name` asks as the
    // timer fires: a pause or resume asked for while FAILED (or overtaken by the failure) is not undone.
    // MIRRORING with a pause asked for commits with `pauseRequested` and asks PAUSING at once, no fetcher.
    retryResumesMirroring: ({ context, event }) =>
      context.aligned &&
      (RESUMES_MIRRORING.has(context.record.previousState) ||
        (RESUMES_PAUSED.has(context.record.previousState) && !retryPauseRequested(context, event))),
    retryResumesPaused: ({ context, event }) =>
      context.aligned &&
      RESUMES_PAUSED.has(context.record.previousState) &&
      retryPauseRequested(context, event),
    alignedLog: ({ context }) => context.aligned,
    // Spec §4's failover writes its markers to close the producer state mirrored from the source; a partition
    // removed while FAILED, or while PREPARING before its truncation (a re-add or failback cancelled), writes
    // them only when its log holds mirrored data (a loop refused in PREPARING, a topic failed again after
    // STOPPED, an untruncated re-add or failback hold none): otherwise the producer state is the topic's own,
    // and an ABORT marker would abort a live local transaction that its producer then commits.
    // (Every other state STOPPING is entered from holds mirrored data.)
    // Or when the log, read as the failover starts, shows a cut no record says was made (see `cutSeenAtFailover`).
    // A log that shows none (a first failback's cut records no LME on that side) may still hold source
    // transactions a cut reopened: the other failover aborts those alone (`abortingHangingTransactions`).
    failoverWritesMarkers: ({ context, event }) =>
      context.holdsMirroredData || cutSeenAtFailover(context, event),
    lmeUnknown: ({ context, event }) =>
      event.type === "LME_FOUND" && alignmentLastMirrorEpoch(event.lme, context.lastMirrorEpoch) < 0,
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
        // A recovered MIRRORING or EPOCH_FENCING partition adds its fetcher, whatever the commit that entered
        // it did (back from EPOCH_FENCING the live commit adds none): while no coordinator had the partition
        // loaded, the leadership listener of a newly elected data leader could not tell it fetches, and a
        // crashed leader's fetchers are gone. Adding is idempotent where the fetcher survived.
        // A recovered MIRRORING partition also releases appends: the EPOCH_FENCING -> MIRRORING commit runs
        // `releaseAppends` after its record is durable, and a coordinator that lost its role in between
        // left them held on a data leader that kept its fetcher. Releasing what is not held does nothing.
        actions:
          route === "MIRRORING"
            ? [fx("addFetcher"), fx("releaseAppends")]
            : route === "EPOCH_FENCING"
              ? [fx("addFetcher")]
              : route === "MIRRORING_PAUSE_REQUESTED"
                ? // MIRRORING's entry runs on the edge: the PAUSING commit does not enter MIRRORING.
                  [{ type: "prepareCommit", params: { to: "PAUSING" } }, ...LIFECYCLE_ENTRY.MIRRORING]
                : [],
      })),
    },
    UNKNOWN: {
      description: "No cached state: the broker just became leader. Not persisted.",
      on: { START: change("PREPARING", []), ...failures },
    },
    PREPARING: {
      description:
        "Refuse a mirror loop, look up the LME on the source, truncate to it (not an aligned log), wait for the ISR.",
      entry: LIFECYCLE_ENTRY.PREPARING,
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
            "No LME (the source knows none, nor did this partition capture one in a failover on this mirror): truncate fully, start at the source's log start.",
          entry: { type: "truncateFully", params: epoch },
          on: {
            TRUNCATED: { guard: "currentEpoch", target: "awaitingIsrTruncation", actions: ALIGNED },
            ...cancelling("cancelTruncation"),
          },
        },
        truncatingToEpoch: {
          description:
            "Truncate the local log to the end offset of the LME: the source's, or on a re-add this partition's own.",
          entry: {
            type: "truncateToEpoch",
            params: ({ context }: Args): TruncateToEpochParams => ({
              stateEpoch: context.record.stateEpoch,
              lme: context.sourceLastMirrorEpoch,
            }),
          },
          on: {
            TRUNCATED: { guard: "currentEpoch", target: "awaitingIsrTruncation", actions: ALIGNED },
            ...cancelling("cancelTruncation"),
          },
        },
        awaitingIsrTruncation: {
          entry: { type: "awaitIsrTruncated", params: epoch },
          on: { ISR_TRUNCATED: change("MIRRORING") },
        },
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    MIRRORING: {
      description: "A fetcher replicates from the source; the topic is read-only.",
      entry: LIFECYCLE_ENTRY.MIRRORING,
      on: {
        PAUSE: change("PAUSING", []),
        EPOCH_OBSERVED: [
          {
            guard: "batchEpochAboveLocal",
            target: "#mirrorPartition.committing",
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
        STOP: changeFromAnyStep("STOPPING"),
        ...failures,
      },
    },
    EPOCH_FENCING: {
      description: "A fetched batch carries a leader epoch above the local one: appends wait for the bump.",
      entry: LIFECYCLE_ENTRY.EPOCH_FENCING,
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
              target: "#mirrorPartition.committing",
              actions: ["noteLeaderEpochBumped", { type: "prepareCommit", params: { to: "MIRRORING" } }],
            },
          },
        },
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    PAUSING: {
      description: "Pause requested; the fetcher is being removed.",
      entry: LIFECYCLE_ENTRY.PAUSING,
      initial: "removingFetcher",
      states: {
        removingFetcher: {
          entry: { type: "removeFetcher", params: epoch },
          on: { FETCHER_REMOVED: change("PAUSED") },
        },
      },
      // STOP while PAUSING is the spec's race guard.
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    PAUSED: {
      description: "No fetcher and no metadata sync; still read-only. Resume goes straight to MIRRORING.",
      entry: LIFECYCLE_ENTRY.PAUSED,
      on: { RESUME: change("MIRRORING", []), STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    STOPPING: {
      description:
        "Failover: every step is idempotent, so re-entering STOPPING restarts the sequence safely; the LME is captured once.",
      entry: LIFECYCLE_ENTRY.STOPPING,
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
          ...recordingLmeAndBumpingEpoch("abortingHangingTransactions"),
          description:
            "Removed while FAILED, or while PREPARING before its truncation, and the log holds no mirrored data (e.g. a loop refused in PREPARING, a re-add or failback cancelled): its producer state is the topic's own, so no PID reset and no ABORT marker over a transaction the cluster's transaction coordinators still run (they would fail a live idempotent producer and abort a live transaction).",
        },
        abortingHangingTransactions: {
          description:
            "KIP-664's hanging transactions: a transaction open on the log that no transaction coordinator of this cluster will end (a source transaction reopened by a truncation no record tells of: a failback's, a coordinator lost before it recorded the cut) gets an ABORT marker; live ones are left alone. Waits (fails and retries) while a coordinator's state is not known.",
          entry: { type: "abortHangingTransactions", params: epoch },
          on: {
            TXNS_ABORTED: {
              guard: "currentEpoch",
              target: "#mirrorPartition.committing",
              actions: { type: "prepareCommit", params: { to: "STOPPED" } },
            },
          },
        },
        abortingTransactions: {
          entry: { type: "abortOpenTransactions", params: epoch },
          on: { TXNS_ABORTED: { guard: "currentEpoch", target: "writingPidReset" } },
        },
        writingPidReset: {
          entry: {
            type: "appendPidReset",
            params: ({ context }: Args): AppendPidResetParams => ({
              stateEpoch: context.record.stateEpoch,
              lme: context.lastMirrorEpoch,
            }),
          },
          on: { PID_RESET_APPENDED: change("STOPPED") },
        },
      },
      on: failures,
    },
    STOPPED: {
      description: "The topic is writable; the last mirror epoch is persisted.",
      entry: LIFECYCLE_ENTRY.STOPPED,
      on: { START: change("PREPARING", []), ...failures },
    },
    FAILED: {
      description: "Keeps the message, the previous state and the attempt; retries with backoff or waits.",
      entry: LIFECYCLE_ENTRY.FAILED,
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
            RETRY_TIMER_FIRED: retryRoutes(["currentEpoch"]),
            // The operator's recover: the retry now, without waiting for the timer.
            RECOVER: retryRoutes([], "cancelRetryTimer"),
            START: {
              target: "#mirrorPartition.committing",
              actions: [fx("cancelRetryTimer"), { type: "prepareCommit", params: { to: "PREPARING" } }],
            },
            ...cancelling("cancelRetryTimer"),
            EFFECT_FAILED: ignoreFailedEntryFailure,
          },
        },
        awaitingOperator: {
          description:
            "Non-retryable or out of attempts: the operator's recover retries it; or remove (STOP), then add back.",
          on: {
            RECOVER: retryRoutes([]),
            // A retryable failure adds nothing to one for good, and must not replace its message: a fetch
            // error in flight as the coordinator failed the partition (the source topic deleted) would
            // otherwise be all the operator reads. A non-retryable one records its own message (FAILED's).
            FAIL: { guard: "failureIsRetryable", actions: [] },
          },
        },
      },
      on: {
        STOP: changeFromAnyStep("STOPPING"),
        FAIL: failures.FAIL,
        EFFECT_FAILED: ignoreFailedEntryFailure,
      },
    },
    committing,
    fenced: {
      description: "Another coordinator leads __mirror_state: this actor is done and runs nothing.",
      type: "final",
    },
  },
});
