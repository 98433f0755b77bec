import {
  type AnyActorScope,
  type AnyStateMachine,
  createActor,
  type EventFromLogic,
  type ExecutableActionObject,
  type InputFrom,
  type SnapshotFrom,
} from "xstate";
import { mirrorPartitionMachine } from "./mirror-partition.machine";
import { replayTransition } from "./transition-replay";

/** A machine's pure initial and next transitions through one reused inert actor scope. */
export interface InertTransition<TMachine extends AnyStateMachine> {
  /** `initialTransition(machine, input)` without building an actor per call. */
  initial(input: InputFrom<TMachine>): [SnapshotFrom<TMachine>, ExecutableActionObject[]];
  /** `transition(machine, snapshot, event)` without building an actor per call. */
  transition(
    snapshot: SnapshotFrom<TMachine>,
    event: EventFromLogic<TMachine>,
  ): [SnapshotFrom<TMachine>, ExecutableActionObject[]];
}

/**
 * Pure transitions of `machine` through one actor scope, made on first use and reused by every call.
 *
 * xstate's `transition()` and `initialTransition()` build a throw-away actor for each call, and building it
 * runs the machine's initial transition: at 100,000 partitions that dominated the coordinator's time and
 * garbage. The machines here spawn and invoke nothing (every effect is a named action, collected through
 * `actionExecutor`), so a scope shared by all transitions is safe; transitions are synchronous, so one
 * collector at a time is enough. `scopeInput` is the input of the scope's own (never started) actor.
 */
export function inertTransition<TMachine extends AnyStateMachine>(
  machine: TMachine,
  scopeInput?: InputFrom<TMachine>,
): InertTransition<TMachine> {
  let scope: AnyActorScope | undefined;
  const inertScope = (): AnyActorScope => {
    if (scope) return scope;
    const self = createActor(machine, { input: scopeInput });
    scope = {
      self,
      defer: () => {},
      id: "",
      logger: () => {},
      sessionId: "",
      stopChild: () => {},
      system: self.system,
      emit: () => {},
      actionExecutor: () => {},
    } as unknown as AnyActorScope;
    return scope;
  };
  // One executor for the scope's lifetime, collecting into the array of the transition running now (no
  // closure per call). Transitions are synchronous and do not nest, so one collector at a time is enough.
  let actions: ExecutableActionObject[] | undefined;
  const collect = (action: ExecutableActionObject): void => {
    actions?.push(action);
  };
  const begin = (): AnyActorScope => {
    const s = inertScope();
    s.actionExecutor = collect;
    actions = [];
    return s;
  };
  const end = (): ExecutableActionObject[] => {
    const collected = actions ?? [];
    actions = undefined;
    return collected;
  };
  return {
    initial: (input) => {
      const s = begin();
      try {
        const snapshot = machine.getInitialSnapshot(s, input) as SnapshotFrom<TMachine>;
        return [snapshot, end()];
      } finally {
        actions = undefined;
      }
    },
    transition: (snapshot, event) => {
      const s = begin();
      try {
        const next = machine.transition(snapshot, event, s) as SnapshotFrom<TMachine>;
        return [next, end()];
      } finally {
        actions = undefined;
      }
    },
  };
}

type PartitionSnapshot = SnapshotFrom<typeof mirrorPartitionMachine>;
type PartitionEvent = EventFromLogic<typeof mirrorPartitionMachine>;

/** `transition(mirrorPartitionMachine, snapshot, event)` without building an actor per call. */
export function transitionPartition(
  snapshot: PartitionSnapshot,
  event: PartitionEvent,
): [PartitionSnapshot, ExecutableActionObject[]] {
  return partitionReplay.transition(snapshot, event);
}

const partitionReplay = replayTransition(mirrorPartitionMachine, {});

/** Counters of `transitionPartition`: transitions replayed, and those that went through xstate. */
export function partitionReplayStats(): { replayed: number; throughXstate: number } {
  return partitionReplay.stats();
}
