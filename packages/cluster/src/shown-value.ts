/**
 * A value as a caller gave it, for an error message: `3`, `"3" (a string)`, `/orders/ (a RegExp)`, `null`,
 * `-5n (a bigint)`; its type is named whenever it is not a number (a count given as a string then reads as
 * what it is). It never throws: a bigint inside an object is shown as one, and an object JSON cannot show
 * (one that refers to itself) is shown by its kind, so a refusal is never a bare TypeError of its own.
 */
export function shownValue(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (typeof value === "bigint") return `${value}n (a bigint)`;
  if (value instanceof RegExp) return `${String(value)} (a RegExp)`;
  if (value === null || value === undefined) return String(value);
  return `${json(value) ?? String(value)} (a ${typeof value})`;
}

function json(value: unknown): string | undefined {
  try {
    return JSON.stringify(value, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
  } catch {
    // A structure that refers to itself.
    return Object.prototype.toString.call(value);
  }
}
