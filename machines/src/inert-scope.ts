import { type AnyActorScope, createActor, type ExecutableActionObject } from "xstate";
import { mirrorPartitionMachine } from "./mirror-partition.machine";

/**
 * One actor scope, made once and reused by every pure transition of the partition machine.
 *
 * xstate's `transition()` builds a throw-away actor for each call, and building it runs the machine's
 * initial transition: at 100,000 partitions that dominated the coordinator's time and garbage. The
 * partition machine spawns and invokes nothing (every effect is a named action), so a scope shared by all
 * transitions is safe; transitions are synchronous, so one collector at a time is enough.
 */
let scope: AnyActorScope | undefined;

function inertScope(): AnyActorScope {
  if (scope) return scope;
  const self = createActor(mirrorPartitionMachine, { input: {} });
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
}

type PartitionSnapshot = ReturnType<typeof mirrorPartitionMachine.transition>;
type PartitionEvent = Parameters<typeof mirrorPartitionMachine.transition>[1];

/** `transition(mirrorPartitionMachine, snapshot, event)` without building an actor per call. */
export function transitionPartition(
  snapshot: PartitionSnapshot,
  event: PartitionEvent,
): [PartitionSnapshot, ExecutableActionObject[]] {
  const actions: ExecutableActionObject[] = [];
  const s = inertScope();
  s.actionExecutor = (action) => {
    actions.push(action);
  };
  try {
    return [mirrorPartitionMachine.transition(snapshot, event, s), actions];
  } finally {
    s.actionExecutor = () => {};
  }
}
