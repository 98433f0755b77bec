import { readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import * as path from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".css": "text/css",
};

/**
 * Serves the built page over HTTP on a free port (the scenario runner needs no node; module workers and
 * fetches need http://, not file://). Returns its base URL and how to stop it.
 */
export async function serveDir(dir: string): Promise<{ baseUrl: string; server: Server }> {
  const root = path.resolve(dir);
  const server = createServer((req, res) => {
    const rel =
      decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname).replace(/^\/+/, "") || "index.html";
    const file = path.resolve(root, rel);
    try {
      if (!file.startsWith(root + path.sep) || !statSync(file).isFile()) throw new Error("not found");
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
      res.end(readFileSync(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return { baseUrl: `http://127.0.0.1:${address.port}`, server };
}
