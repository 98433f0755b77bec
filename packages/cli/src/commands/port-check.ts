import * as net from "node:net";
import { OperationError } from "./cli-errors";

/**
 * Fails when `host:port` cannot be listened on now (in use, or a privileged port), naming the flag and
 * what to do. Called before anything starts: without it the clusters started (and recovered the data dir)
 * only to stop again on Node's bare `listen EADDRINUSE`. Port 0 (any free port) always passes. A program
 * that takes the port between this check and the node's own listen still gets that listen's error.
 */
export async function checkPortFree(flag: string, host: string, port: number): Promise<void> {
  if (port === 0) return;
  const code = await new Promise<string | undefined>((resolve) => {
    const server = net.createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
  if (code === undefined) return;
  const why =
    code === "EADDRINUSE"
      ? "is in use by another program (another cluster-mirror node or demo?)"
      : "cannot be listened on";
  throw new OperationError(
    `${flag} ${port}: ${host}:${port} ${why} (${code}); nothing was started. Stop that program, or pass another ${flag} (0 picks a free port).`,
  );
}
