import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { type AdminSecurity, registerAdminAuth } from "../security/admin-auth";
import { registerAclRoutes } from "./acl-routes";
import { registerAdminRoutes } from "./admin-routes";
import { registerClientRoutes } from "./client-routes";
import { BadRequestError, errorResponse } from "./http-errors";
import { withMirrorLocation } from "./mirror-hint";
import type { MirrorNode } from "./mirror-node";
import { DEFAULT_REQUEST_LIMITS, type RequestLimits } from "./request-limits";
import { registerUiRoutes } from "./ui-routes";
import { registerWaitRoutes } from "./wait-routes";
import { NODE_HEADER, toJson } from "./wire";

/**
 * The node's admin endpoint: every `kafka-mirrors` operation plus produce/consume/log routes and the
 * `/v1/wait` long poll, JSON in and out (bigints as decimal strings); failures answer
 * `{error: {name, code, message}}` with a 4xx status for typed errors. Each request is logged (method, url,
 * status, duration) on `logger`. Every request first passes `security`'s checks (Host header, bearer token).
 */
export function buildAdminServer(
  node: MirrorNode,
  logger: Logger,
  security: AdminSecurity,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
): FastifyInstance {
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, bodyLimit: limits.bodyLimitBytes });
  app.setReplySerializer((payload) => toJson(payload));
  // Every answer, the auth check's refusals included, says it comes from a node (see NODE_HEADER).
  app.addHook("onSend", async (req, reply, payload) => {
    void reply.header(NODE_HEADER, "1");
    // The client left before the answer: Fastify logs no "request completed" then, so the outcome is
    // logged here and every request still ends in the log with its status and duration.
    if (req.raw.socket?.destroyed) {
      req.log.info(
        {
          event: "request.completed_after_abort",
          res: { statusCode: reply.statusCode },
          responseTime: reply.elapsedTime,
        },
        `request completed after the client had closed the connection: status ${reply.statusCode}`,
      );
    }
    return payload;
  });
  // A client that gives up (its --timeout-ms) does not stop what it asked for. (Fastify's onRequestAbort
  // sees only a client that leaves while its body is still arriving.)
  app.addHook("onRequest", async (req, reply) => {
    const socket = req.raw.socket;
    const onClose = () => {
      if (reply.raw.writableFinished) return;
      req.log.info(
        { event: "request.aborted" },
        "the client closed the connection before the answer; the request goes on, and its outcome is logged when it ends",
      );
    };
    socket.once("close", onClose);
    reply.raw.once("finish", () => socket.off("close", onClose));
  });
  // Before anything else: no route, not even a 404, answers a request that fails the Host or token check.
  registerAdminAuth(app, security);
  app.setErrorHandler((raw, req, reply) => {
    const error = withMirrorLocation(raw, node, req.principal);
    // Fastify's own request errors (bad JSON, wrong content type) carry a 4xx statusCode; a body over the
    // limit keeps its 413, so a client can tell "too large" from "malformed".
    const own = (error as { statusCode?: number }).statusCode;
    const mapped =
      own === 413
        ? {
            status: 413,
            body: {
              error: {
                name: "REQUEST_TOO_LARGE",
                code: -1,
                message: `the request body is larger than the node's limit of ${limits.bodyLimitBytes} bytes; send less in one request`,
              },
            },
          }
        : own !== undefined && own >= 400 && own < 500 && !(error instanceof BadRequestError)
          ? errorResponse(new BadRequestError((error as Error).message))
          : errorResponse(error);
    if (mapped.status >= 500) logger.error({ err: error }, "request failed");
    if (mapped.status === 401) void reply.header("www-authenticate", 'Bearer realm="cluster-mirror"');
    void reply.status(mapped.status).type("application/json").send(mapped.body);
  });
  app.setNotFoundHandler((req, reply) => {
    void reply
      .status(404)
      .send({ error: { name: "NOT_FOUND", code: -1, message: `no route ${req.method} ${req.url}` } });
  });
  registerAdminRoutes(app, node);
  registerAclRoutes(app, node);
  registerClientRoutes(app, node, limits);
  registerWaitRoutes(app, node);
  registerUiRoutes(app, node);
  return app;
}

/** The Prometheus endpoint: `GET /metrics` with the destination's mirror metrics in text format 0.0.4. */
export function buildMetricsServer(node: MirrorNode): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get("/metrics", async (_req, reply) => {
    void reply.type("text/plain; version=0.0.4; charset=utf-8");
    return node.destination.mirroring.metrics.toPrometheusText();
  });
  return app;
}
