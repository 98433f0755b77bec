import type { Cancel } from "./scheduler";

interface Queued {
  task: () => void;
  cancelled: boolean;
}

/** The part of a browser's `MessageChannel` used here (Node's typings describe Node's own variant). */
interface Channel {
  port1: { onmessage: ((event: unknown) => void) | null };
  port2: { postMessage(message: unknown): void };
}

let channel: Channel | undefined;
const queued: Queued[] = [];

/**
 * Runs `task` on the next turn of the event loop, after the current step and its promise continuations:
 * `setImmediate` where the runtime has it (Node.js); elsewhere (browsers) a `MessageChannel` message, which
 * runs as soon, whereas `setTimeout(0)` is clamped to 4 ms once nested and makes an embedded cluster ~15x
 * slower. Tasks run in the order they were given.
 */
export function runSoon(task: () => void): Cancel {
  if (typeof setImmediate === "function") {
    const handle = setImmediate(task);
    return () => clearImmediate(handle);
  }
  const entry: Queued = { task, cancelled: false };
  queued.push(entry);
  messageChannel().port2.postMessage(undefined);
  return () => {
    entry.cancelled = true;
  };
}

function messageChannel(): Channel {
  if (channel === undefined) {
    channel = new MessageChannel() as unknown as Channel;
    // One message per task, delivered in order: each runs the oldest queued task.
    channel.port1.onmessage = () => {
      const next = queued.shift();
      if (next !== undefined && !next.cancelled) next.task();
    };
  }
  return channel;
}
