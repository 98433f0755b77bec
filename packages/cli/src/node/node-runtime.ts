import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { buildAdminServer, buildMetricsServer } from "./http-server";
import { MirrorNode, type MirrorNodeOptions } from "./mirror-node";
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
}

/** A node serving its admin (and metrics) endpoint, logging state changes and sync errors. */
export interface NodeRuntime {
  node: MirrorNode;
  adminPort: number;
  metricsPort: number | undefined;
  /** Stops serving, then shuts the clusters down cleanly. */
  close(): Promise<void>;
}

/** Starts a node (or serves an already started one) on 127.0.0.1 with structured logs on `logger`. */
export async function startNodeRuntime(
  options: NodeRuntimeOptions,
  logger: Logger,
  existing?: MirrorNode,
): Promise<NodeRuntime> {
  const node =
    existing ??
    MirrorNode.start({
      ...options,
      warn: (cluster, message) => logger.warn({ event: "mirror.sync_error", cluster, message }, message),
    });
  const stopWatch = watchStates(node.clusters(), node.scheduler, (change) =>
    logger.info(
      { event: "mirror.partition.state", ...change },
      `${change.topic}-${change.partition} ${change.to}`,
    ),
  );
  const host = options.host ?? "127.0.0.1";
  const servers: FastifyInstance[] = [];
  try {
    const admin = buildAdminServer(node, logger, options.limits);
    servers.push(admin);
    await admin.listen({ host, port: options.port });
    const adminPort = portOf(admin);
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
        clusters: node.clusters().map((c) => ({
          name: c.name,
          clusterId: c.cluster.clusterId,
          recoveredMetadataRecords: c.recoveredRecords,
        })),
      },
      `cluster-mirror node listening on ${host}:${adminPort}`,
    );
    let closing: Promise<void> | undefined;
    return {
      node,
      adminPort,
      metricsPort,
      close: () => {
        closing ??= (async () => {
          stopWatch();
          for (const s of servers) await s.close();
          node.close();
          logger.info({ event: "node.stopped" }, "cluster-mirror node stopped");
        })();
        return closing;
      },
    };
  } catch (error) {
    stopWatch();
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
