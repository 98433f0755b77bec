import { UsageError } from "./cli-errors";

/** An integer flag at least `min`; UsageError naming the flag otherwise. */
export function intFlag(flag: string, value: string, min: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`${flag} must be an integer >= ${min}, got '${value}'`);
  }
  return n;
}
