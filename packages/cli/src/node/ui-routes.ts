import { existsSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";
import { graphsPayload, type StateHistoryPage, VISUALIZER_DIST_DIR } from "@cluster-mirror/visualizer";
import type { FastifyInstance } from "fastify";
import { InspectionStream } from "./inspection-stream";
import type { MirrorNode } from "./mirror-node";
import { readMirrorStateHistory } from "./mirror-state-history";
import { fieldsOf, optionalInt, optionalString } from "./request-fields";

/** At most this many `__mirror_state` records per page. */
export const MAX_HISTORY_PAGE = 10_000;

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".map": "application/json",
};

/** Options of {@link registerUiRoutes}. */
export interface UiRoutesOptions {
  /** Where the built page is (default: the visualizer package's `dist`). */
  distDir?: string;
}

/**
 * The visualizer, served by the node:
 * - `GET /ui/` and its static files (the page `vite build` wrote into the visualizer's `dist`);
 * - `GET /ui/api/graphs` -> `{graphs, validFrom, views, layouts}` (machine graphs, spec §4's table, and the
 *   precomputed layouts of each machine's default view);
 * - `GET /ui/api/mirror-state?cluster=&offset=&limit=` -> a page of the decoded `__mirror_state` history
 *   ({@link StateHistoryPage}; `offset` is the position in the merged, time-ordered history);
 * - `GET /ui/api/stream?cluster=` -> server-sent events, one XState-inspection-shaped JSON event each.
 */
export function registerUiRoutes(
  app: FastifyInstance,
  node: MirrorNode,
  options: UiRoutesOptions = {},
): void {
  const dist = options.distDir ?? VISUALIZER_DIST_DIR;
  const stream = new InspectionStream(node);
  const open = new Set<() => void>();
  app.addHook("preClose", async () => {
    for (const end of [...open]) end();
    stream.close();
  });

  app.get("/ui", async (_req, reply) => reply.redirect("/ui/"));

  app.get("/ui/api/graphs", async () => graphsPayload());

  app.get("/ui/api/mirror-state", async (req): Promise<StateHistoryPage> => {
    const q = fieldsOf(req.query);
    const cluster = node.cluster(optionalString(q, "cluster")).cluster;
    const offset = optionalInt(q, "offset", 0) ?? 0;
    const limit = Math.min(optionalInt(q, "limit", 1) ?? 1000, MAX_HISTORY_PAGE);
    const { records, partitions } = readMirrorStateHistory(cluster);
    return { total: records.length, offset, records: records.slice(offset, offset + limit), partitions };
  });

  app.get("/ui/api/stream", async (req, reply) => {
    const q = fieldsOf(req.query);
    const clusterName = optionalString(q, "cluster");
    if (clusterName !== undefined) node.cluster(clusterName); // unknown: a 404 before the stream starts
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    res.write(": cluster-mirror inspection stream\n\n");
    const disconnect = stream.connect((event) => {
      res.write(`data: ${JSON.stringify(event)}\n\n`);
    }, clusterName);
    const heartbeat = setInterval(() => res.write(": ping\n\n"), 15_000);
    const end = () => {
      clearInterval(heartbeat);
      disconnect();
      open.delete(end);
      res.end();
    };
    open.add(end);
    req.raw.on("close", end);
  });

  app.get("/ui/*", async (req, reply) => {
    const rel = decodeURIComponent((req.params as { "*": string })["*"] || "index.html");
    const file = path.resolve(dist, rel);
    if (!file.startsWith(path.resolve(dist) + path.sep)) {
      return reply.status(404).send({ error: { name: "NOT_FOUND", code: -1, message: `no file ${rel}` } });
    }
    const target = existsSync(file) && statSync(file).isFile() ? file : null;
    if (target === null) {
      if (!existsSync(path.join(dist, "index.html"))) {
        return reply
          .status(503)
          .type("text/plain; charset=utf-8")
          .send(
            `The visualizer is not built (no ${path.join(dist, "index.html")}). Build it with \`pnpm --filter @cluster-mirror/visualizer run build\`, then reload.`,
          );
      }
      return reply.status(404).send({ error: { name: "NOT_FOUND", code: -1, message: `no file ${rel}` } });
    }
    return reply
      .type(CONTENT_TYPES[path.extname(target)] ?? "application/octet-stream")
      .send(readFileSync(target));
  });
}
