/**
 * What the simulator needs from Node, provided in the browser (imported first by the scenario runner):
 * - `Buffer` (the `buffer` package) with the `base64url` encoding it lacks (topic ids use it);
 * - `setImmediate` on a MessageChannel: the simulator flushes microtasks with it after every step, and a
 *   `setTimeout(0)` stand-in is clamped to 4 ms by browsers (15x slower runs);
 * - a `process` with an empty `env`.
 */
import { Buffer } from "buffer";

const bufferToString = Buffer.prototype.toString as (
  this: Buffer,
  encoding?: string,
  start?: number,
  end?: number,
) => string;
Buffer.prototype.toString = function (this: Buffer, encoding?: string, start?: number, end?: number) {
  if (encoding === "base64url") {
    return bufferToString
      .call(this, "base64", start, end)
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
  }
  return bufferToString.call(this, encoding, start, end);
} as Buffer["toString"];
const bufferFrom = Buffer.from as (...args: unknown[]) => Buffer;
Buffer.from = ((value: unknown, encoding?: unknown, length?: unknown) => {
  if (encoding === "base64url" && typeof value === "string") {
    return bufferFrom.call(Buffer, value.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  }
  return bufferFrom.call(Buffer, value, encoding, length);
}) as typeof Buffer.from;

const g = globalThis as Record<string, unknown>;
g.Buffer ??= Buffer;
g.process ??= { env: {}, pid: 0 };
if (typeof g.setImmediate !== "function") {
  const queue = new Map<number, () => void>();
  let next = 0;
  const channel = new MessageChannel();
  channel.port1.onmessage = (e: MessageEvent<number>) => {
    const task = queue.get(e.data);
    queue.delete(e.data);
    task?.();
  };
  g.setImmediate = (task: (...args: unknown[]) => void, ...args: unknown[]) => {
    const id = ++next;
    queue.set(id, () => task(...args));
    channel.port2.postMessage(id);
    return id;
  };
  g.clearImmediate = (id: number) => {
    queue.delete(id);
  };
}
