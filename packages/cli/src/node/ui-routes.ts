import { existsSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";
import type { StateHistoryPage } from "@cluster-mirror/mirror";
import type { FastifyInstance } from "fastify";
import { indexAfter, parseHistoryCursor } from "./history-cursor";
import { InspectionStream } from "./inspection-stream";
import type { MirrorNode } from "./mirror-node";
import { MirrorStateHistoryCache } from "./mirror-state-history-cache";
import { fieldsOf, optionalInt, optionalString } from "./request-fields";
import { SSE_MAX_BUFFERED_BYTES, sseWriter } from "./sse-writer";

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

/** What the node needs of `@cluster-mirror/visualizer`, an optional peer dependency loaded on first use. */
type Visualizer = Pick<typeof import("@cluster-mirror/visualizer"), "graphsPayload" | "VISUALIZER_DIST_DIR">;

let visualizer: Promise<Visualizer | Error> | undefined;

/** Loads the visualizer package once; an Error says how to install it when it is missing. */
function loadVisualizer(): Promise<Visualizer | Error> {
  visualizer ??= import("@cluster-mirror/visualizer").then(
    (m): Visualizer => m,
    (error: unknown) =>
      new Error(
        `the visualizer is not installed (${error instanceof Error ? error.message : String(error)}); install @cluster-mirror/visualizer next to @cluster-mirror/cli`,
      ),
  );
  return visualizer;
}

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
 * - `GET /ui/api/mirror-state?cluster=&offset=&limit=&after=` -> a page of the decoded `__mirror_state`
 *   history ({@link StateHistoryPage}; `offset` is the position in the merged, time-ordered history;
 *   `after=timestamp:partition:offset`, the last record of the previous page, starts the page after it,
 *   stable when new records sort before it). Kept between requests: a request decodes only what was
 *   committed since the last one ({@link MirrorStateHistoryCache});
 * - `GET /ui/api/stream?cluster=` -> server-sent events, one XState-inspection-shaped JSON event each.
 */
export function registerUiRoutes(
  app: FastifyInstance,
  node: MirrorNode,
  options: UiRoutesOptions = {},
): void {
  const distDir = async (): Promise<string | Error> => {
    if (options.distDir !== undefined) return options.distDir;
    const v = await loadVisualizer();
    return v instanceof Error ? v : v.VISUALIZER_DIST_DIR;
  };
  const stream = new InspectionStream(node);
  const history = new MirrorStateHistoryCache();
  const open = new Set<() => void>();
  app.addHook("preClose", async () => {
    for (const end of [...open]) end();
    stream.close();
  });

  app.get("/ui", async (_req, reply) => reply.redirect("/ui/"));

  app.get("/ui/api/graphs", async (_req, reply) => {
    const v = await loadVisualizer();
    if (v instanceof Error) return reply.status(503).type("text/plain; charset=utf-8").send(v.message);
    return v.graphsPayload();
  });

  app.get("/ui/api/mirror-state", async (req): Promise<StateHistoryPage> => {
    const q = fieldsOf(req.query);
    const cluster = node.cluster(optionalString(q, "cluster")).cluster;
    const after = optionalString(q, "after");
    const cursor = after === undefined ? undefined : parseHistoryCursor(after);
    const from = optionalInt(q, "offset", 0) ?? 0;
    const limit = Math.min(optionalInt(q, "limit", 1) ?? 1000, MAX_HISTORY_PAGE);
    const { records, partitions } = history.read(cluster);
    const offset = cursor === undefined ? from : indexAfter(records, cursor);
    const topics = cluster.controller.image.topicsById;
    const page = records.slice(offset, offset + limit).map((r, i) => ({
      position: offset + i,
      ...r,
      // The topic's name now (the record was decoded earlier: the topic may since be gone).
      key: r.key && { ...r.key, topic: topics.get(r.key.topicId)?.name ?? null },
    }));
    return { total: records.length, offset, records: page, partitions };
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
    let ended = false;
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    let disconnect: (() => void) | undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      disconnect?.();
      open.delete(end);
      res.end();
    };
    // A client that stops reading is cut off rather than buffered for without bound; it reconnects. Not
    // during the first full state (written at once, however large the fleet): what waits of it counts on
    // top of the limit.
    let live: ((chunk: string) => void) | undefined;
    const write = (chunk: string) => (live === undefined ? res.write(chunk) : live(chunk));
    disconnect = stream.connect((event) => write(`data: ${JSON.stringify(event)}\n\n`), clusterName);
    live = sseWriter(res, end, SSE_MAX_BUFFERED_BYTES + res.writableLength);
    heartbeat = setInterval(() => write(": ping\n\n"), 15_000);
    open.add(end);
    req.raw.on("close", end);
  });

  app.get("/ui/*", async (req, reply) => {
    const dist = await distDir();
    if (dist instanceof Error) return reply.status(503).type("text/plain; charset=utf-8").send(dist.message);
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
