import type { Violation } from "./sim";

/**
 * Engine bugs found by these properties, excluded so CI stays green until they are fixed in the engine.
 * Each filter names the issue item (issue 11, "Lose nothing") whose violations it matches; remove it when
 * that fix lands on main (the properties then cover the case again). See docs/testing/seeded-bugs.md for the
 * seeds and counterexamples that found each.
 *
 * Issue 11's items 2-6, 8 and 11 are fixed and their counterexamples are regressions in
 * transitions.test.ts. Fixed earlier: ENGINE BUG 3 (a failover while PREPARING, after a failback and before the truncation,
 * captured the old primary's own epoch as LME); its counterexample is a regression in failback.test.ts.
 */
const OPEN: {
  item: string;
  matches: (v: Violation) => boolean;
  /** The bug breaks the world for the rest of the run: every other violation of that run is its consequence. */
  taintsRun?: boolean;
}[] = [];

/** Every known-bug filter, applied by every topology property: the matching item, or undefined. */
export const KNOWN_ENGINE_BUGS: readonly ((v: Violation) => string | undefined)[] = OPEN.map(
  (bug) => (v: Violation) => (bug.matches(v) ? bug.item : undefined),
);

/** The known bug that broke this run (its other violations are consequences), or undefined. */
export function runTaintedBy(violations: readonly Violation[]): string | undefined {
  return OPEN.find((bug) => bug.taintsRun && violations.some(bug.matches))?.item;
}
