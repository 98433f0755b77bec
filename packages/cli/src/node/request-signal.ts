import { KafkaError } from "@cluster-mirror/protocol";
import type { FastifyReply } from "fastify";

/**
 * A long request cut short (HTTP 503): the node began to stop, or its client went away. What it had started
 * and the node persists goes on when the node is back: a failover that had begun completes on restart.
 */
export class RequestCutShortError extends KafkaError {
  constructor(message: string) {
    super("BROKER_NOT_AVAILABLE", 8, true, message);
  }
}

/** The node began to stop while a long request (a promote, a consume, a wait) was in flight. */
export class NodeStoppingError extends RequestCutShortError {
  constructor(what: string) {
    super(
      `the node is stopping: ${what}. Once it is back, check with --describe and repeat the command if needed`,
    );
  }
}

/**
 * A signal that fires when the node begins to stop (`stopping`) or when the client goes away before its
 * answer was sent (a CLI's Ctrl-C): long routes pass it on, so that neither holds work nobody waits for.
 */
export function requestSignal(stopping: AbortSignal, reply: FastifyReply): AbortSignal {
  const clientGone = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) clientGone.abort();
  });
  return AbortSignal.any([stopping, clientGone.signal]);
}

/** `work`, or NodeStoppingError as soon as the node begins to stop (the work itself is not stopped). */
export function untilStopping<T>(stopping: AbortSignal, work: Promise<T>, what: string): Promise<T> {
  if (stopping.aborted) return Promise.reject(new NodeStoppingError(what));
  return new Promise<T>((resolve, reject) => {
    const onStop = () => reject(new NodeStoppingError(what));
    stopping.addEventListener("abort", onStop, { once: true });
    work.then(
      (value) => {
        stopping.removeEventListener("abort", onStop);
        resolve(value);
      },
      (error: unknown) => {
        stopping.removeEventListener("abort", onStop);
        reject(error);
      },
    );
  });
}
