import * as fs from "node:fs";
import * as path from "node:path";
import type { Command } from "commander";
import { UsageError } from "../commands/cli-errors";
import { ADMIN_TOKEN_FILE } from "../security/admin-token";
import { discoverToken } from "../security/node-pointer";
import { type Endpoint, parseBootstrap } from "./bootstrap";
import { NodeClient } from "./node-client";

/** The environment variable the CLIs read the node's admin token from. */
export const TOKEN_ENV = "CLUSTER_MIRROR_TOKEN";

/** The flags of every CLI command that talks to a node. */
export interface NodeConnectionFlags {
  bootstrapServer: string;
  /** The admin (or a principal's) token. */
  token?: string;
  /** The node's data dir, to read `admin.token` from. */
  dataDir?: string;
}

/** Adds `--token` and `--data-dir` (where the CLI finds the node's admin token) to a command. */
export function withTokenOptions(command: Command): Command {
  return command
    .option("--token <token>", `the node's admin token, or a principal's (default: $${TOKEN_ENV})`)
    .option("--data-dir <dir>", `the node's data dir, to read its token from DIR/${ADMIN_TOKEN_FILE}`);
}

/**
 * The bearer token to send, first found of: `--token`, `$CLUSTER_MIRROR_TOKEN`, `--data-dir DIR`'s
 * `admin.token`, the pointer file a node of this user left for the port (loopback endpoints only).
 * Undefined when none: the node then answers 401 saying where the token is.
 */
export function resolveToken(
  flags: Omit<NodeConnectionFlags, "bootstrapServer">,
  endpoint: Endpoint,
): string | undefined {
  if (flags.token !== undefined) {
    if (flags.token.trim() === "") throw new UsageError("--token is empty; pass the node's admin token");
    return flags.token.trim();
  }
  const env = process.env[TOKEN_ENV]?.trim();
  if (env) return env;
  if (flags.dataDir !== undefined) {
    const file = path.join(flags.dataDir, ADMIN_TOKEN_FILE);
    try {
      return fs.readFileSync(file, "utf8").trim();
    } catch (error) {
      throw new UsageError(
        `cannot read the admin token ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}); pass the --data-dir the node runs on, or --token TOKEN`,
      );
    }
  }
  const loopback = ["127.0.0.1", "localhost", "::1"].includes(endpoint.host);
  return loopback ? discoverToken(endpoint.port) : undefined;
}

/**
 * A client of the node at `--bootstrap-server`, with the token {@link resolveToken} finds. `timeoutHint`
 * tells a user whose request timed out which flag sets the wait.
 */
export function connectNode(
  flags: NodeConnectionFlags,
  timeoutMs?: number,
  timeoutHint?: string,
): NodeClient {
  const endpoint = parseBootstrap(flags.bootstrapServer);
  return new NodeClient(endpoint, timeoutMs, resolveToken(flags, endpoint), timeoutHint);
}
