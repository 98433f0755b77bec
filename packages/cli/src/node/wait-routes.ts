import { MirrorWaitTimeoutError } from "@cluster-mirror/mirror";
import { KafkaError } from "@cluster-mirror/protocol";
import type { FastifyInstance } from "fastify";
import { BadRequestError } from "./http-errors";
import type { MirrorNode } from "./mirror-node";
import { fieldsOf, optionalBool, optionalInt, optionalString, requiredString } from "./request-fields";
import { untilStopping } from "./request-signal";
import { authorize, CLUSTER_RESOURCE } from "./route-auth";

/** How long one `/v1/wait` request holds at most (well under fetch's 300 s header timeout). */
export const MAX_WAIT_MS = 120_000;
const DEFAULT_WAIT_MS = 30_000;

/**
 * A long poll, so that scripts and tests wait on the mirror itself instead of polling describe against a
 * wall-clock deadline of their own:
 * - `GET /v1/wait?mirror=M&state=S[&topic=T]`: answers once every partition of M (of topic T) is in S;
 * - `GET /v1/wait?mirror=M&caughtUp=true`: answers once every partition of M is MIRRORING with no lag.
 *
 * Both take `cluster` (as the other admin routes) and `timeoutMs` (default 30 s, at most
 * {@link MAX_WAIT_MS}). The answer is `{reached: true}`, or `{reached: false, reason}` when `timeoutMs`
 * passed first (ask again to keep waiting); an unknown mirror is an error as in describe.
 */
export function registerWaitRoutes(app: FastifyInstance, node: MirrorNode): void {
  app.get("/v1/wait", async (req) => {
    const q = fieldsOf(req.query);
    const target = node.cluster(optionalString(q, "cluster"));
    authorize(target, req.principal, "DESCRIBE", "CLUSTER", CLUSTER_RESOURCE);
    const mirroring = target.mirroring;
    const mirror = requiredString(q, "mirror");
    const state = optionalString(q, "state");
    const caughtUp = optionalBool(q, "caughtUp");
    if ((state === undefined) === !caughtUp) {
      throw new BadRequestError("give exactly one of 'state' or 'caughtUp=true'");
    }
    const timeoutMs = Math.min(optionalInt(q, "timeoutMs", 1) ?? DEFAULT_WAIT_MS, MAX_WAIT_MS);
    const topic = optionalString(q, "topic");
    try {
      const wait =
        state !== undefined
          ? mirroring.whenState(mirror, state, { timeoutMs, ...(topic ? { topic } : {}) })
          : mirroring.whenCaughtUp(mirror, { timeoutMs });
      await untilStopping(node.stopping, wait, "the wait was cut short");
      return { reached: true };
    } catch (error) {
      // The wait running out of time is an answer the caller may simply repeat; any other typed error is
      // about the request (unknown mirror): answer it as an error.
      if (error instanceof KafkaError && !(error instanceof MirrorWaitTimeoutError)) throw error;
      return { reached: false, reason: error instanceof Error ? error.message : String(error) };
    }
  });
}
