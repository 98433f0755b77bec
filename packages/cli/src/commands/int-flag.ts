import { FETCH_BAD_PORTS } from "../client/node-client";
import { UsageError } from "./cli-errors";

/** An integer flag at least `min` (and at most `max`); UsageError naming the flag otherwise. */
export function intFlag(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${flag} must be an integer ${range}, got '${value}'`);
  }
  return n;
}

/** Longest timeout a flag or request field takes: the longest a Node.js timer waits (about 24.8 days). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** Highest TCP port number. */
export const MAX_PORT = 65_535;

/** A TCP port flag, 0 (any free port) to 65535; checked before anything starts. */
export function portFlag(flag: string, value: string): number {
  return intFlag(flag, value, 0, MAX_PORT);
}

/**
 * `--port`: a port the CLIs can reach. Their HTTP client (fetch) refuses the WHATWG "bad ports" (6000,
 * 6666, ...): a node listening on one would start, and no CLI could talk to it.
 */
export function adminPortFlag(value: string): number {
  const port = portFlag("--port", value);
  if (FETCH_BAD_PORTS.has(port)) {
    throw new UsageError(
      `--port ${port} cannot be used: the CLIs' HTTP client (fetch) refuses to connect to port ${port} (a WHATWG "bad port", reserved for other protocols), so no CLI could reach the node. Pick another port, e.g. the default 9094 (0 picks a free port).`,
    );
  }
  return port;
}
