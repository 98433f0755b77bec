import { KafkaError } from "@cluster-mirror/protocol";
import type { LifecycleState } from "./lifecycle";

/**
 * A command that is not valid from the partition's current lifecycle state (spec §4: "refused with a typed
 * error that names the state and the attempt; it never corrupts state"). Kafka has no code for it, so `code`
 * is -1 like the project's other mirror-only errors; `retriable` is false because sending the same command
 * again cannot succeed until something else changes the state.
 */
export class InvalidMirrorStateError extends KafkaError {
  /** The committed lifecycle state that refused the command (`fenced`: the coordinator lost leadership). */
  readonly state: LifecycleState | "fenced";
  /** The refused command's type. */
  readonly command: string;
  /** The lifecycle change waiting for its append when the command arrived, if any. */
  readonly pendingTo: LifecycleState | null;

  constructor(
    state: LifecycleState | "fenced",
    command: string,
    pendingTo: LifecycleState | null,
    message: string,
  ) {
    super("INVALID_MIRROR_STATE", -1, false, message);
    this.state = state;
    this.command = command;
    this.pendingTo = pendingTo;
  }
}
