/**
 * A value as a caller gave it, for an error message: `3`, `"3" (a string)`, `/orders/ (a RegExp)`, `null`;
 * its type is named whenever it is not a number (a count given as a string then reads as what it is).
 */
export function shownValue(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (value instanceof RegExp) return `${String(value)} (a RegExp)`;
  if (value === null || value === undefined) return String(value);
  return `${JSON.stringify(value) ?? String(value)} (a ${typeof value})`;
}
