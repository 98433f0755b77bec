import { SystemClock } from "@cluster-mirror/cluster";
import type { MirrorWarningKind } from "@cluster-mirror/mirror";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { PrincipalToken } from "../security/admin-auth";
import { loadOrCreateAdminToken } from "../security/admin-token";
import { removeNodePointer, writeNodePointer } from "../security/node-pointer";
import { buildAdminServer, buildMetricsServer } from "./http-server";
import { MirrorNode, type MirrorNodeOptions } from "./mirror-node";
import { RepeatedWarnings } from "./repeated-warnings";
import type { RequestLimits } from "./request-limits";
import { watchStates } from "./state-watcher";

/** Where the node listens. Port 0 picks a free one (read it back from `adminPort` / `metricsPort`). */
export interface NodeRuntimeOptions extends MirrorNodeOptions {
  host?: string;
  port: number;
  /** Omitted: no metrics endpoint. */
  metricsPort?: number;
  /** What one admin request may ask for; omitted: DEFAULT_REQUEST_LIMITS. */
  limits?: RequestLimits;
  /** Principals with their own admin API tokens (`--principals FILE`); the admin token is always valid. */
  principals?: readonly PrincipalToken[];
  /** Host names besides the loopback ones the admin API answers to (`--allowed-host`). */
  allowedHosts?: readonly string[];
}

/** A node serving its admin (and metrics) endpoint, logging state changes and sync errors. */
export interface NodeRuntime {
  node: MirrorNode;
  adminPort: number;
  metricsPort: number | undefined;
  /** The admin token every request must bear (`Authorization: Bearer`). */
  adminToken: string;
  /** Where the admin token is kept: `<dataDir>/admin.token`; undefined for an in-memory node. */
  adminTokenFile: string | undefined;
  /** Stops serving, then shuts the clusters down cleanly. */
  close(): Promise<void>;
}

/**
 * Starts a node (or serves an already started one) on 127.0.0.1 with structured logs on `logger`. The admin
 * endpoint requires the node's admin token (kept in the data dir, see `loadOrCreateAdminToken`); a pointer
 * file in the user's runtime dir lets the CLIs of the same user find it by port (removed on close).
 */
export async function startNodeRuntime(
  options: NodeRuntimeOptions,
  logger: Logger,
  existing?: MirrorNode,
): Promise<NodeRuntime> {
  const clock = options.clock ?? new SystemClock();
  // A lasting fault (an unreachable source retried every second) logs once a minute with a count, not on
  // every retry; per cluster, so the same fault of two clusters is logged for each.
  const warnings = new Map<string, RepeatedWarnings>();
  const warn = (cluster: string, message: string, kind?: MirrorWarningKind): void => {
    // The event names what the warning is about: mirror.sync_error, mirror.topic_skipped,
    // mirror.source_connection, or mirror.warning for the rest.
    const event = `mirror.${kind ?? "warning"}`;
    const id = `${cluster}\u0000${event}`;
    let repeated = warnings.get(id);
    if (repeated === undefined) {
      repeated = new RepeatedWarnings(clock, (text, held) =>
        logger.warn(
          { event, cluster, message: text, ...(held > 0 ? { repeated: held } : {}) },
          held > 0 ? `${text} (${held} more times since it was last logged)` : text,
        ),
      );
      warnings.set(id, repeated);
    }
    repeated.warn(message);
  };
  const node = existing ?? MirrorNode.start({ ...options, clock, warn });
  const stopWatch = watchStates(node.clusters(), node.scheduler, (change) =>
    logger.info(
      { event: "mirror.partition.state", ...change },
      `${change.topic}-${change.partition} ${change.to}`,
    ),
  );
  const host = options.host ?? "127.0.0.1";
  const servers: FastifyInstance[] = [];
  let pointerPort: number | undefined;
  try {
    const { token: adminToken, file: adminTokenFile } = loadOrCreateAdminToken(options.dataDir);
    const security = {
      adminToken,
      principals: options.principals ?? [],
      allowedHosts: [...(options.allowedHosts ?? []), ...(host === "127.0.0.1" ? [] : [host])],
    };
    const admin = buildAdminServer(node, logger, security, options.limits);
    servers.push(admin);
    await admin.listen({ host, port: options.port });
    const adminPort = portOf(admin);
    const pointer = writeNodePointer({
      port: adminPort,
      pid: process.pid,
      token: adminToken,
      ...(adminTokenFile === undefined ? {} : { tokenFile: adminTokenFile }),
    });
    if (pointer.file !== undefined) pointerPort = adminPort;
    else
      logger.warn(
        { event: "node.pointer_failed", reason: pointer.error },
        `could not leave the admin token for the CLIs (${pointer.error}); pass them --token or --data-dir`,
      );
    let metricsPort: number | undefined;
    if (options.metricsPort !== undefined) {
      const metrics = buildMetricsServer(node);
      servers.push(metrics);
      await metrics.listen({ host, port: options.metricsPort });
      metricsPort = portOf(metrics);
    }
    logger.info(
      {
        event: "node.started",
        adminPort,
        metricsPort,
        adminTokenFile: adminTokenFile ?? null,
        seed: node.seed,
        principals: security.principals.map((p) => p.principal),
        aclsEnforced: options.enforceAcls ?? false,
        clusters: node.clusters().map((c) => ({
          name: c.name,
          clusterId: c.cluster.clusterId,
          recoveredMetadataRecords: c.recoveredRecords,
        })),
      },
      `cluster-mirror node listening on ${host}:${adminPort}; admin token in ${adminTokenFile ?? "memory (in-memory node)"}`,
    );
    let closing: Promise<void> | undefined;
    return {
      node,
      adminPort,
      metricsPort,
      adminToken,
      adminTokenFile,
      close: () => {
        closing ??= (async () => {
          // Long requests (a promote catching up, a consume, a wait) end first, or the servers' close
          // would wait for them.
          node.stopRequests();
          stopWatch();
          if (pointerPort !== undefined) removeNodePointer(pointerPort, process.pid);
          for (const s of servers) await s.close();
          node.close();
          logger.info({ event: "node.stopped" }, "cluster-mirror node stopped");
        })();
        return closing;
      },
    };
  } catch (error) {
    stopWatch();
    if (pointerPort !== undefined) removeNodePointer(pointerPort, process.pid);
    for (const s of servers) await s.close().catch(() => undefined);
    if (!existing) node.close();
    throw error;
  }
}

function portOf(app: FastifyInstance): number {
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("the server has no TCP address");
  return address.port;
}
