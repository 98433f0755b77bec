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
