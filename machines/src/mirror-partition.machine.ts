import { assign, setup } from "xstate";
import {
  LEADER_EPOCH_BUMP_INCREMENT,
  LEADER_EPOCH_BUMP_THRESHOLD,
  type LifecycleState,
  UNKNOWN_PARTITION,
} from "./lifecycle";
import type {
  AppendStateRecordParams,
  BumpLeaderEpochParams,
  MirrorPartitionContext,
  MirrorPartitionEvent,
  MirrorPartitionInput,
  ScheduleRetryParams,
  TruncateToEpochParams,
} from "./mirror-partition.types";
import { buildPendingCommit } from "./pending-commit";
import { DEFAULT_RETRY_BACKOFF, retryBackoffDelayMs } from "./retry-backoff";

/** Placeholder for an effect the runtime provides with `machine.provide({ actions })`. */
function effect<P = undefined>(): (args: unknown, params: P) => void {
  return () => {};
}

/** The commit step every lifecycle change passes through: append the record, then (and only then) move. */
function committing<const To extends LifecycleState, const Resume extends string>(to: To, resume: Resume) {
  return {
    entry: {
      type: "appendStateRecord",
      params: ({ context }: { context: MirrorPartitionContext }) => context.pending!.record,
    },
    on: {
      COMMITTED: { target: `#mirrorPartition.${to}`, actions: "applyCommit" },
      COMMIT_FAILED: { target: resume, actions: "dropPendingCommit" },
      FENCED: { target: resume, actions: "dropPendingCommit" },
    },
  } as const;
}

type ChangeGuard = "batchEpochAboveLocal" | "previousStateWasStopping";

/** A lifecycle change from a step: record what will be appended, then wait in the sibling `committing_<to>`. */
function change<const To extends LifecycleState, const G extends ChangeGuard | undefined = undefined>(
  to: To,
  guard?: G,
) {
  return { guard, target: `committing_${to}`, actions: { type: "prepareCommit", params: { to } } } as const;
}

/**
 * A lifecycle change handled by the lifecycle state itself (whatever step it is in), refused while another
 * change waits for its append.
 */
function changeFromAnyStep<const To extends LifecycleState>(to: To) {
  return {
    guard: "noPendingCommit",
    target: `.committing_${to}`,
    actions: { type: "prepareCommit", params: { to } },
  } as const;
}

/** Every lifecycle state may fail (spec §4: FAILED is valid from any state). */
const failures = { FAIL: changeFromAnyStep("FAILED"), EFFECT_FAILED: changeFromAnyStep("FAILED") } as const;

/**
 * The mirror partition actor of spec §4: one per mirrored topic-partition.
 *
 * Top-level states are the lifecycle states. Inside each, `committing_X` sub-states are the commit protocol:
 * the machine requests `appendStateRecord` and waits; COMMITTED enters X and starts X's effects, while
 * COMMIT_FAILED or FENCED leaves the old state (restarting its idempotent steps). `recovering` is the entry
 * point that rehydrates from a `__mirror_state` record so the recovered state's effects run again.
 * Every effect is a named action with no implementation here: the runtime provides them (or runs the
 * actions that the pure `transition()` returns).
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
      pending: buildPendingCommit(context, event, params.to),
    })),
    appendStateRecord: effect<AppendStateRecordParams>(),
    applyCommit: assign(({ context }) => ({
      record: context.pending!.record,
      retryJitter: context.pending!.retryJitter,
      pending: null,
    })),
    dropPendingCommit: assign({ pending: null }),
    // Bookkeeping from effect results that is not a lifecycle change (persisted with the next record).
    noteLeaderEpoch: assign(({ context, event }) =>
      event.type === "EPOCH_BUMPED" && event.leaderEpoch > context.record.leaderEpoch
        ? { record: { ...context.record, leaderEpoch: event.leaderEpoch } }
        : {},
    ),
    noteLastMirrorEpoch: assign(({ context, event }) => ({
      lastMirrorEpoch: event.type === "LME_RECORDED" ? event.lme : context.lastMirrorEpoch,
    })),
    // Effects: PREPARING.
    markReadOnly: effect(),
    checkMirrorLoop: effect(),
    lookupLastMirrorEpoch: effect(),
    truncateFully: effect(),
    truncateToEpoch: effect<TruncateToEpochParams>(),
    awaitIsrTruncated: effect(),
    // Effects: MIRRORING and EPOCH_FENCING.
    addFetcher: effect(),
    bumpLeaderEpoch: effect<BumpLeaderEpochParams>(),
    // Effects: PAUSING, STOPPING, STOPPED.
    removeFetcher: effect(),
    recordLastMirrorEpoch: effect(),
    abortOpenTransactions: effect(),
    appendPidReset: effect(),
    clearReadOnly: effect(),
    // Effects: FAILED.
    scheduleRetry: effect<ScheduleRetryParams>(),
    cancelRetryTimer: effect(),
  },
  guards: {
    noPendingCommit: ({ context }) => context.pending === null,
    recordStateIs: ({ context }, params: { state: LifecycleState }) => context.record.state === params.state,
    isNonRetryable: ({ context }) => context.record.retryAttempt < 0,
    pendingIsNonRetryable: ({ context }) => (context.pending?.record.retryAttempt ?? 0) < 0,
    previousStateWasStopping: ({ context }) => context.record.previousState === "STOPPING",
    lmeUnknown: ({ event }) => event.type === "LME_FOUND" && event.lme < 0,
    batchEpochAboveLocal: ({ context, event }) =>
      event.type === "EPOCH_OBSERVED" && event.batchEpoch > context.record.leaderEpoch,
    batchEpochNearLocal: ({ context, event }) =>
      event.type === "EPOCH_OBSERVED" &&
      event.batchEpoch >= context.record.leaderEpoch - LEADER_EPOCH_BUMP_THRESHOLD,
  },
}).createMachine({
  id: "mirrorPartition",
  context: ({ input }) => ({
    record: input?.record ?? UNKNOWN_PARTITION,
    lastMirrorEpoch: input?.record?.lastMirrorEpoch ?? -1,
    retryJitter: input?.retryJitter ?? 1,
    pending: null,
    retry: input?.retry ?? DEFAULT_RETRY_BACKOFF,
  }),
  initial: "recovering",
  states: {
    recovering: {
      description:
        "Rehydrate from the __mirror_state record: enter its state so that state's effects run again.",
      always: [
        { guard: { type: "recordStateIs", params: { state: "PREPARING" } }, target: "PREPARING" },
        { guard: { type: "recordStateIs", params: { state: "MIRRORING" } }, target: "MIRRORING" },
        { guard: { type: "recordStateIs", params: { state: "EPOCH_FENCING" } }, target: "EPOCH_FENCING" },
        { guard: { type: "recordStateIs", params: { state: "PAUSING" } }, target: "PAUSING" },
        { guard: { type: "recordStateIs", params: { state: "PAUSED" } }, target: "PAUSED" },
        { guard: { type: "recordStateIs", params: { state: "STOPPING" } }, target: "STOPPING" },
        { guard: { type: "recordStateIs", params: { state: "STOPPED" } }, target: "STOPPED" },
        { guard: { type: "recordStateIs", params: { state: "FAILED" } }, target: "FAILED" },
        { target: "UNKNOWN" },
      ],
    },
    UNKNOWN: {
      description: "No cached state: the broker just became leader. Not persisted.",
      initial: "idle",
      states: {
        idle: { on: { START: change("PREPARING") } },
        committing_PREPARING: committing("PREPARING", "idle"),
        committing_FAILED: committing("FAILED", "idle"),
      },
      on: failures,
    },
    PREPARING: {
      description: "Look up the LME on the source, truncate to it, wait for the ISR to truncate.",
      entry: "markReadOnly",
      initial: "checkingMirrorLoop",
      states: {
        checkingMirrorLoop: {
          entry: "checkMirrorLoop",
          on: { MIRROR_LOOP_CHECKED: "lookingUpLastMirrorEpoch" },
        },
        lookingUpLastMirrorEpoch: {
          entry: "lookupLastMirrorEpoch",
          on: {
            LME_FOUND: [
              { guard: "lmeUnknown", target: "truncating", actions: "truncateFully" },
              {
                target: "truncating",
                actions: {
                  type: "truncateToEpoch",
                  params: ({ event }) => ({ lme: event.type === "LME_FOUND" ? event.lme : -1 }),
                },
              },
            ],
          },
        },
        truncating: { on: { TRUNCATED: "awaitingIsrTruncation" } },
        awaitingIsrTruncation: {
          entry: "awaitIsrTruncated",
          on: { ISR_TRUNCATED: change("MIRRORING") },
        },
        committing_MIRRORING: committing("MIRRORING", "checkingMirrorLoop"),
        committing_STOPPING: committing("STOPPING", "checkingMirrorLoop"),
        committing_FAILED: committing("FAILED", "checkingMirrorLoop"),
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    MIRRORING: {
      description: "A fetcher replicates from the source; the topic is read-only.",
      entry: "addFetcher",
      initial: "replicating",
      states: {
        replicating: {
          on: {
            PAUSE: change("PAUSING"),
            EPOCH_OBSERVED: [
              change("EPOCH_FENCING", "batchEpochAboveLocal"),
              {
                guard: "batchEpochNearLocal",
                actions: {
                  type: "bumpLeaderEpoch",
                  params: ({ context }) => ({
                    minLeaderEpoch: context.record.leaderEpoch + LEADER_EPOCH_BUMP_INCREMENT,
                  }),
                },
              },
            ],
            EPOCH_BUMPED: { actions: "noteLeaderEpoch" },
          },
        },
        committing_EPOCH_FENCING: committing("EPOCH_FENCING", "replicating"),
        committing_PAUSING: committing("PAUSING", "replicating"),
        committing_STOPPING: committing("STOPPING", "replicating"),
        committing_FAILED: committing("FAILED", "replicating"),
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    EPOCH_FENCING: {
      description: "A fetched batch carries a leader epoch above the local one: appends wait for the bump.",
      initial: "bumpingLeaderEpoch",
      states: {
        bumpingLeaderEpoch: {
          entry: {
            type: "bumpLeaderEpoch",
            params: ({ context }) => ({
              minLeaderEpoch: context.record.leaderEpoch + LEADER_EPOCH_BUMP_INCREMENT,
            }),
          },
          on: { EPOCH_BUMPED: change("MIRRORING") },
        },
        committing_MIRRORING: committing("MIRRORING", "bumpingLeaderEpoch"),
        committing_STOPPING: committing("STOPPING", "bumpingLeaderEpoch"),
        committing_FAILED: committing("FAILED", "bumpingLeaderEpoch"),
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    PAUSING: {
      description: "Pause requested; the fetcher is being removed.",
      initial: "removingFetcher",
      states: {
        removingFetcher: {
          entry: "removeFetcher",
          on: { FETCHER_REMOVED: change("PAUSED") },
        },
        committing_PAUSED: committing("PAUSED", "removingFetcher"),
        committing_STOPPING: committing("STOPPING", "removingFetcher"),
        committing_FAILED: committing("FAILED", "removingFetcher"),
      },
      // STOP while PAUSING is the spec's race guard.
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    PAUSED: {
      description: "No fetcher and no metadata sync; still read-only. Resume goes straight to MIRRORING.",
      initial: "idle",
      states: {
        idle: { on: { RESUME: change("MIRRORING") } },
        committing_MIRRORING: committing("MIRRORING", "idle"),
        committing_STOPPING: committing("STOPPING", "idle"),
        committing_FAILED: committing("FAILED", "idle"),
      },
      on: { STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
    STOPPING: {
      description:
        "Failover: every step is idempotent, so re-entering STOPPING restarts the sequence safely.",
      initial: "removingFetcher",
      states: {
        removingFetcher: {
          entry: "removeFetcher",
          on: { FETCHER_REMOVED: "recordingLmeAndBumpingEpoch" },
        },
        recordingLmeAndBumpingEpoch: {
          type: "parallel",
          states: {
            lastMirrorEpoch: {
              initial: "recording",
              states: {
                recording: {
                  entry: "recordLastMirrorEpoch",
                  on: { LME_RECORDED: { target: "recorded", actions: "noteLastMirrorEpoch" } },
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
                    params: ({ context }) => ({
                      minLeaderEpoch: context.record.leaderEpoch + LEADER_EPOCH_BUMP_INCREMENT,
                    }),
                  },
                  on: { EPOCH_BUMPED: { target: "bumped", actions: "noteLeaderEpoch" } },
                },
                bumped: { type: "final" },
              },
            },
          },
          onDone: "abortingTransactions",
        },
        abortingTransactions: {
          entry: "abortOpenTransactions",
          on: { TXNS_ABORTED: "writingPidReset" },
        },
        writingPidReset: {
          entry: "appendPidReset",
          on: { PID_RESET_APPENDED: change("STOPPED") },
        },
        committing_STOPPED: committing("STOPPED", "removingFetcher"),
        committing_FAILED: committing("FAILED", "removingFetcher"),
      },
      on: failures,
    },
    STOPPED: {
      description: "The topic is writable; the last mirror epoch is persisted.",
      entry: "clearReadOnly",
      initial: "idle",
      states: {
        idle: { on: { START: change("PREPARING") } },
        committing_PREPARING: committing("PREPARING", "idle"),
        committing_FAILED: committing("FAILED", "idle"),
      },
      on: failures,
    },
    FAILED: {
      description: "Keeps the message, the previous state and the attempt; retries with backoff or waits.",
      entry: "removeFetcher",
      initial: "choosingRetry",
      states: {
        choosingRetry: {
          always: [{ guard: "isNonRetryable", target: "awaitingOperator" }, { target: "backingOff" }],
        },
        backingOff: {
          entry: {
            type: "scheduleRetry",
            params: ({ context }) => ({
              attempt: context.record.retryAttempt,
              delayMs: retryBackoffDelayMs(context.record.retryAttempt, context.retryJitter, context.retry),
            }),
          },
          exit: "cancelRetryTimer",
          on: {
            RETRY_TIMER_FIRED: [
              // A failover that failed half way resumes STOPPING; anything else starts over in PREPARING.
              change("STOPPING", "previousStateWasStopping"),
              change("PREPARING"),
            ],
          },
        },
        awaitingOperator: {
          description: "Non-retryable or out of attempts: only REMOVE (STOP) or an explicit START moves on.",
        },
        committing_PREPARING: committing("PREPARING", "choosingRetry"),
        committing_STOPPING: committing("STOPPING", "choosingRetry"),
        committing_FAILED: committing("FAILED", "choosingRetry"),
      },
      on: { START: changeFromAnyStep("PREPARING"), STOP: changeFromAnyStep("STOPPING"), ...failures },
    },
  },
});
