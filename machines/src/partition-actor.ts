import { type Actor, createActor } from "xstate";
import { mirrorPartitionMachine } from "./mirror-partition.machine";
import type { MirrorPartitionInput } from "./mirror-partition.types";

/** A live mirror partition actor. */
export type MirrorPartitionActor = Actor<typeof mirrorPartitionMachine>;

/**
 * Creates and starts a live partition actor through `recovering`, so the recovered state's effects run.
 * Pass `machine` to supply effect implementations (`mirrorPartitionMachine.provide({ actions })`).
 */
export function startMirrorPartitionActor(
  input: MirrorPartitionInput,
  machine: typeof mirrorPartitionMachine = mirrorPartitionMachine,
): MirrorPartitionActor {
  return createActor(machine, { input }).start();
}
