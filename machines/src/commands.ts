import { type AnyStateNode, initialTransition, type SnapshotFrom, transition } from "xstate";
import { InvalidMirrorStateError } from "./errors";
import { isLifecycleState, type LifecycleState, type MirrorPartitionStateRecord } from "./lifecycle";
import { mirrorPartitionMachine } from "./mirror-partition.machine";
import type {
  AppendStateRecordParams,
  BumpLeaderEpochParams,
  MirrorPartitionCommand,
  MirrorPartitionEvent,
  MirrorPartitionInput,
  ScheduleRetryParams,
  TruncateToEpochParams,
} from "./mirror-partition.types";
import { validFrom } from "./valid-from";

/** A snapshot of the mirror partition machine. */
export type MirrorPartitionSnapshot = SnapshotFrom<typeof mirrorPartitionMachine>;

/** Effects without parameters. */
export type MirrorPartitionSimpleEffectType =
  | "markReadOnly"
  | "checkMirrorLoop"
  | "lookupLastMirrorEpoch"
  | "truncateFully"
  | "awaitIsrTruncated"
  | "addFetcher"
  | "removeFetcher"
  | "recordLastMirrorEpoch"
  | "abortOpenTransactions"
  | "appendPidReset"
  | "clearReadOnly"
  | "cancelRetryTimer";

/** An effect the runtime must run, as returned by a pure transition: a named action and its parameters. */
export type MirrorPartitionEffect =
  | { readonly type: "appendStateRecord"; readonly params: AppendStateRecordParams }
  | { readonly type: "bumpLeaderEpoch"; readonly params: BumpLeaderEpochParams }
  | { readonly type: "truncateToEpoch"; readonly params: TruncateToEpochParams }
  | { readonly type: "scheduleRetry"; readonly params: ScheduleRetryParams }
  | { readonly type: MirrorPartitionSimpleEffectType };

/** The result of feeding one event to a partition snapshot with the pure `transition()`. */
export interface MirrorPartitionStep {
  /** The next snapshot (the same reference when the event changed nothing). */
  readonly snapshot: MirrorPartitionSnapshot;
  /** Effects to run, in order. For a lifecycle change they start only after COMMITTED. */
  readonly effects: readonly MirrorPartitionEffect[];
  /** False when no transition was enabled: the event was ignored. */
  readonly changed: boolean;
}

function toEffect(action: { type: string; params?: unknown }): MirrorPartitionEffect {
  return (
    action.params === undefined ? { type: action.type } : { type: action.type, params: action.params }
  ) as MirrorPartitionEffect;
}

/**
 * Feeds any event (command, effect result or commit result) to a snapshot and returns the next snapshot and
 * the effects to run. Pure: no clock, no randomness, no I/O. An event with no enabled transition returns the
 * same snapshot and no effects.
 */
export function applyEvent(
  snapshot: MirrorPartitionSnapshot,
  event: MirrorPartitionEvent,
): MirrorPartitionStep {
  const [next, actions] = transition(mirrorPartitionMachine, snapshot, event);
  // xstate returns the same reference when no transition is enabled (unknown event or failed guard).
  return { snapshot: next, effects: actions.map(toEffect), changed: next !== snapshot };
}

/** The lifecycle state each command asks for. */
export const COMMAND_TARGETS: { readonly [C in MirrorPartitionCommand["type"]]: LifecycleState } = {
  START: "PREPARING",
  PAUSE: "PAUSING",
  RESUME: "MIRRORING",
  STOP: "STOPPING",
  FAIL: "FAILED",
};

/**
 * Sends an operator or metadata-manager command. Throws `InvalidMirrorStateError` naming the state and the
 * command when the command is not valid from the current state (or another change is waiting for its
 * append); the snapshot passed in is never modified.
 */
export function sendCommand(
  snapshot: MirrorPartitionSnapshot,
  command: MirrorPartitionCommand,
): MirrorPartitionStep {
  const step = applyEvent(snapshot, command);
  if (step.changed) return step;
  const state = lifecycleStateOf(snapshot);
  const pendingTo = snapshot.context.pending?.to ?? null;
  const to = COMMAND_TARGETS[command.type];
  const allowed = validFrom[to].filter((s): s is LifecycleState => s !== null);
  const message =
    pendingTo !== null
      ? `Cannot ${command.type} mirror partition in state ${state}: a change to ${pendingTo} is waiting for its ` +
        "__mirror_state append. Retry once it has committed or failed."
      : `Cannot ${command.type} mirror partition in state ${state}: ${command.type} moves it to ${to}, which is ` +
        `valid only from ${allowed.join(", ")}. Describe the mirror to see each partition's state and retry from one of those.`;
  throw new InvalidMirrorStateError(state, command.type, pendingTo, message);
}

/**
 * The committed lifecycle state of a snapshot: its top-level state node. While a change waits for its
 * append, this is still the old state.
 */
export function lifecycleStateOf(snapshot: MirrorPartitionSnapshot): LifecycleState {
  const value: unknown = snapshot.value;
  const key = typeof value === "string" ? value : Object.keys(value as object)[0];
  return key !== undefined && isLifecycleState(key) ? key : snapshot.context.record.state;
}

/** The committed `__mirror_state` value of a snapshot (spec §6), as a fresh plain object. */
export function toStateRecord(snapshot: MirrorPartitionSnapshot): MirrorPartitionStateRecord {
  const r = snapshot.context.record;
  return {
    state: lifecycleStateOf(snapshot),
    leaderEpoch: r.leaderEpoch,
    stateEpoch: r.stateEpoch,
    errorMessage: r.errorMessage,
    retryAttempt: r.retryAttempt,
    previousState: r.previousState,
  };
}

/**
 * Rehydrates a partition from its records through the `recovering` state. Returns the snapshot and the
 * effects the recovered state owns (e.g. STOPPING restarts with `removeFetcher`), which the runtime runs.
 */
export function recoverPartition(input: MirrorPartitionInput): MirrorPartitionStep {
  const [snapshot, actions] = initialTransition(mirrorPartitionMachine, input);
  return { snapshot, effects: actions.map(toEffect), changed: true };
}

type EntryAction = string | { type: string; params?: unknown };

/**
 * The effects the snapshot's active states own: the entry effects of every active state node, outermost
 * first, with their parameters resolved from the context. These are the effects in flight (or to restart).
 */
export function pendingEffectsOf(snapshot: MirrorPartitionSnapshot): MirrorPartitionEffect[] {
  const effects: MirrorPartitionEffect[] = [];
  const visit = (node: AnyStateNode, value: unknown): void => {
    for (const entry of node.entry as EntryAction[]) {
      const action = typeof entry === "string" ? { type: entry } : entry;
      const params =
        typeof action.params === "function"
          ? (action.params as (a: { context: unknown; event: unknown }) => unknown)({
              context: snapshot.context,
              event: { type: "xstate.init" },
            })
          : action.params;
      effects.push(toEffect({ type: action.type, params }));
    }
    if (typeof value === "string") {
      const child = node.states[value];
      if (child) visit(child, undefined);
    } else if (value !== null && typeof value === "object") {
      for (const [key, sub] of Object.entries(value)) {
        const child = node.states[key];
        if (child) visit(child, sub);
      }
    }
  };
  visit(mirrorPartitionMachine.root, snapshot.value);
  return effects;
}
