import { type AnyStateNode, initialTransition, type SnapshotFrom, transition } from "xstate";
import { InvalidMirrorStateError } from "./errors";
import {
  isLifecycleState,
  LIFECYCLE_STATES,
  type LifecycleState,
  type MirrorPartitionStateRecord,
} from "./lifecycle";
import { mirrorPartitionMachine } from "./mirror-partition.machine";
import type {
  AppendPidResetParams,
  AppendStateRecordParams,
  BumpLeaderEpochParams,
  EffectParams,
  MirrorPartitionCommand,
  MirrorPartitionEvent,
  MirrorPartitionInput,
  RecordLastMirrorEpochParams,
  ScheduleRetryParams,
  TruncateToEpochParams,
} from "./mirror-partition.types";

/** A snapshot of the mirror partition machine. */
export type MirrorPartitionSnapshot = SnapshotFrom<typeof mirrorPartitionMachine>;

/** Effects whose only parameter is the `stateEpoch` they were requested under. */
export type MirrorPartitionSimpleEffectType =
  | "markReadOnly"
  | "clearReadOnly"
  | "clearLastMirrorEpoch"
  | "checkMirrorLoop"
  | "lookupLastMirrorEpoch"
  | "truncateFully"
  | "cancelTruncation"
  | "awaitIsrTruncated"
  | "addFetcher"
  | "removeFetcher"
  | "holdAppends"
  | "releaseAppends"
  | "abortOpenTransactions"
  | "abortHangingTransactions"
  | "cancelRetryTimer"
  | "cancelCommitRetry";

/** An effect the runtime must run, as returned by a pure transition: a named action and its parameters. */
export type MirrorPartitionEffect =
  | { readonly type: "appendStateRecord"; readonly params: AppendStateRecordParams }
  | { readonly type: "bumpLeaderEpoch"; readonly params: BumpLeaderEpochParams }
  | { readonly type: "truncateToEpoch"; readonly params: TruncateToEpochParams }
  | { readonly type: "appendPidReset"; readonly params: AppendPidResetParams }
  | { readonly type: "recordLastMirrorEpoch"; readonly params: RecordLastMirrorEpochParams }
  | { readonly type: "scheduleRetry" | "scheduleCommitRetry"; readonly params: ScheduleRetryParams }
  | { readonly type: MirrorPartitionSimpleEffectType; readonly params: EffectParams };

/** The result of feeding one event to a partition snapshot with the pure `transition()`. */
export interface MirrorPartitionStep {
  /** The next snapshot (the same reference when the event changed nothing). */
  readonly snapshot: MirrorPartitionSnapshot;
  /** Effects to run, in order. For a lifecycle change they start only after COMMITTED. */
  readonly effects: readonly MirrorPartitionEffect[];
  /** False when the event was ignored (no enabled transition, e.g. a stale result): nothing to do. */
  readonly changed: boolean;
}

const NO_EFFECTS: readonly MirrorPartitionEffect[] = Object.freeze([]);

function toEffect(action: { type: string; params?: unknown }): MirrorPartitionEffect {
  return { type: action.type, params: action.params } as MirrorPartitionEffect;
}

/**
 * Feeds any event (command, effect result, observation or commit result) to a snapshot and returns the next
 * snapshot and the effects to run. Pure: no clock, no randomness, no I/O.
 */
export function applyEvent(
  snapshot: MirrorPartitionSnapshot,
  event: MirrorPartitionEvent,
): MirrorPartitionStep {
  const [next, actions] = transition(mirrorPartitionMachine, snapshot, event);
  // xstate returns the same reference when no transition is enabled (unknown event or failed guard).
  const n = actions.length;
  const effects: MirrorPartitionEffect[] = n === 0 ? (NO_EFFECTS as MirrorPartitionEffect[]) : new Array(n);
  for (let i = 0; i < n; i++) effects[i] = toEffect(actions[i] as { type: string; params?: unknown });
  return { snapshot: next, effects, changed: next !== snapshot || n > 0 };
}

/** The lifecycle state each command asks for. */
export const COMMAND_TARGETS: { readonly [C in MirrorPartitionCommand["type"]]: LifecycleState } = {
  START: "PREPARING",
  PAUSE: "PAUSING",
  RESUME: "MIRRORING",
  STOP: "STOPPING",
  FAIL: "FAILED",
  // Where the retry goes first unless the previous state is safe to resume (see `retryRoutes`).
  RECOVER: "PREPARING",
};

function* descendants(node: AnyStateNode): Generator<AnyStateNode> {
  yield node;
  for (const child of Object.values(node.states) as AnyStateNode[]) yield* descendants(child);
}

/** The lifecycle states whose chart accepts `command` (the commit step, a separate state, accepts none). */
function statesAccepting(command: MirrorPartitionCommand["type"]): LifecycleState[] {
  return LIFECYCLE_STATES.filter((s) => {
    const node = mirrorPartitionMachine.root.states[s] as AnyStateNode;
    for (const n of descendants(node)) if (n.transitions.has(command)) return true;
    return false;
  });
}

/** For each command, the lifecycle states that accept it (derived from the chart, for error messages). */
export const COMMAND_ACCEPTED_IN: {
  readonly [C in MirrorPartitionCommand["type"]]: readonly LifecycleState[];
} = {
  START: statesAccepting("START"),
  PAUSE: statesAccepting("PAUSE"),
  RESUME: statesAccepting("RESUME"),
  STOP: statesAccepting("STOP"),
  FAIL: statesAccepting("FAIL"),
  RECOVER: statesAccepting("RECOVER"),
};

/**
 * Sends an operator or metadata-manager command. Throws `InvalidMirrorStateError` naming the state and the
 * command when the command is not valid now (not accepted in the current state, or another change is
 * waiting for its append); the snapshot passed in is never modified.
 */
export function sendCommand(
  snapshot: MirrorPartitionSnapshot,
  command: MirrorPartitionCommand,
): MirrorPartitionStep {
  const step = applyEvent(snapshot, command);
  if (step.changed) return step;
  throw commandRefusal(snapshot, command);
}

/**
 * Why `command` is refused in `snapshot` (which does not accept it: `snapshot.can(command)` is false), as
 * the typed error an operator sees: the state, the command, the change waiting for its append (if any) and
 * what to do.
 */
export function commandRefusal(
  snapshot: MirrorPartitionSnapshot,
  command: MirrorPartitionCommand,
): InvalidMirrorStateError {
  const state = lifecycleStateOf(snapshot);
  const pendingTo = snapshot.context.pending?.to ?? null;
  const accepted = COMMAND_ACCEPTED_IN[command.type];
  let message: string;
  if (state === "fenced") {
    message = `Cannot ${command.type} mirror partition: its coordinator lost leadership of __mirror_state. Send it to the new coordinator.`;
  } else if (command.type === "FAIL" && command.retryable && failedForGood(snapshot)) {
    message =
      `Cannot FAIL mirror partition in state ${state} with a retryable failure: it is failed for good ` +
      `(${failedForGoodReason(snapshot)}), which a retryable failure would only hide. Recover it, or remove ` +
      "the topic from the mirror (STOP) and add it back.";
  } else if (pendingTo !== null) {
    message =
      `Cannot ${command.type} mirror partition in state ${state}: a change to ${pendingTo} is waiting for its ` +
      "__mirror_state append. Retry once it has committed.";
  } else if (state === "FAILED" && command.type === "START") {
    message =
      `Cannot START mirror partition in state FAILED: the failure is not retryable (${snapshot.context.record.errorMessage}). ` +
      "Remove the topic from the mirror (STOP), then add it back.";
  } else {
    message =
      `Cannot ${command.type} mirror partition in state ${state}: ${command.type} is accepted only in ` +
      `${accepted.join(", ")}. Describe the mirror to see each partition's state.`;
  }
  return new InvalidMirrorStateError(state, command.type, pendingTo, message);
}

/**
 * The committed lifecycle state of a snapshot: its top-level state node (`fenced` once another coordinator
 * took over). While a change waits for its append (in `committing`), this is still the old state: the
 * committed record's.
 */
export function lifecycleStateOf(snapshot: MirrorPartitionSnapshot): LifecycleState | "fenced" {
  const value: unknown = snapshot.value;
  const key = typeof value === "string" ? value : firstKey(value as object);
  if (key === "fenced") return "fenced";
  return key !== undefined && isLifecycleState(key) ? key : snapshot.context.record.state;
}

/** `Object.keys(o)[0]` without building the array (a state value has one key per active region). */
function firstKey(o: object): string | undefined {
  for (const k in o) if (Object.hasOwn(o, k)) return k;
  return undefined;
}

/** The committed `__mirror_state` value of a snapshot (spec §6), as a fresh plain object. */
export function toStateRecord(snapshot: MirrorPartitionSnapshot): MirrorPartitionStateRecord {
  const r = snapshot.context.record;
  return {
    state: r.state,
    leaderEpoch: r.leaderEpoch,
    stateEpoch: r.stateEpoch,
    errorMessage: r.errorMessage,
    retryAttempt: r.retryAttempt,
    previousState: r.previousState,
  };
}

/**
 * Rehydrates a partition from its records through the `recovering` state. Returns the snapshot and the
 * effects the recovered state's commit started (e.g. STOPPING restarts with `markReadOnly`,
 * `removeFetcher`), which the runtime runs again: they are idempotent. A recovered MIRRORING or
 * EPOCH_FENCING partition also starts with `addFetcher`, even when its commit added none. Throws
 * `RangeError` for an input that cannot be recovered (a retryable FAILED record without `retryJitter`).
 */
export function recoverPartition(input: MirrorPartitionInput): MirrorPartitionStep {
  const [snapshot, actions] = initialTransition(mirrorPartitionMachine, input);
  // xstate turns an error in the context factory (a bad input) into an error snapshot: surface it.
  if (snapshot.status === "error") throw snapshot.error;
  return { snapshot, effects: actions.map(toEffect), changed: true };
}

type ActionDef = string | { type: string; params?: unknown };

/** Resolves action definitions (names or `{ type, params }`) against a snapshot's context, as xstate does. */
export function resolveEffects(defs: readonly unknown[], context: unknown): MirrorPartitionEffect[] {
  const out: MirrorPartitionEffect[] = [];
  for (const def of defs as ActionDef[]) {
    const action = typeof def === "string" ? { type: def } : def;
    const params =
      typeof action.params === "function"
        ? (action.params as (a: { context: unknown; event: unknown }) => unknown)({
            context,
            event: { type: "xstate.init" },
          })
        : action.params;
    out.push(toEffect({ type: action.type, params }));
  }
  return out;
}

/**
 * The effects the snapshot's active states own: the entry effects of every active state node, outermost
 * first, with their parameters resolved from the context. These are the effects in flight. While a change
 * waits in `committing`, the committed lifecycle state's own entry effects stay in force (e.g.
 * EPOCH_FENCING's held appends): they come first, then the commit step's.
 */
export function pendingEffectsOf(snapshot: MirrorPartitionSnapshot): MirrorPartitionEffect[] {
  const effects: MirrorPartitionEffect[] = [];
  const top = typeof snapshot.value === "string" ? snapshot.value : firstKey(snapshot.value);
  if (top === "committing") {
    const committed = mirrorPartitionMachine.root.states[snapshot.context.record.state] as AnyStateNode;
    effects.push(...resolveEffects(committed.entry as unknown[], snapshot.context));
  }
  const visit = (node: AnyStateNode, value: unknown): void => {
    effects.push(...resolveEffects(node.entry as unknown[], snapshot.context));
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

/** FAILED for good, or a failure for good waiting for its append: what a retryable failure must not replace. */
function failedForGood(snapshot: MirrorPartitionSnapshot): boolean {
  const { pending, record } = snapshot.context;
  return pending !== null
    ? pending.record.retryAttempt < 0
    : record.state === "FAILED" && record.retryAttempt < 0;
}

function failedForGoodReason(snapshot: MirrorPartitionSnapshot): string | null {
  return (snapshot.context.pending?.record ?? snapshot.context.record).errorMessage;
}
