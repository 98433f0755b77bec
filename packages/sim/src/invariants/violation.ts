/** One broken invariant: which one, and a message that says what was expected and what was found. */
export interface Violation {
  invariant: string;
  message: string;
}

/** A readable multi-line summary of violations (empty string for none). */
export function formatViolations(violations: readonly Violation[]): string {
  return violations.map((v) => `[${v.invariant}] ${v.message}`).join("\n");
}
