import type { Violation } from "./sim";

/**
 * Engine bugs found by these properties, excluded so CI stays green until they are fixed in the engine.
 * Each filter names the issue item (issue 11, "Lose nothing") whose violations it matches; remove it when
 * that fix lands on main (the properties then cover the case again). See /work/wt/bugs/RESULTS.md for the
 * seeds and counterexamples that found each.
 *
 * Fixed earlier: ENGINE BUG 3 (a failover while PREPARING, after a failback and before the truncation,
 * captured the old primary's own epoch as LME); its counterexample is a regression in failback.test.ts.
 */
const OPEN: {
  item: string;
  matches: (v: Violation) => boolean;
  /** The bug breaks the world for the rest of the run: every other violation of that run is its consequence. */
  taintsRun?: boolean;
}[] = [
  {
    item: "issue 11 item 2/3: a diverging-epoch answer or a FAILED retry truncates the whole mirrored copy",
    matches: (v) =>
      v.invariant === "committed-prefix" &&
      (v.message.includes("full truncation") || v.message.includes("truncation to 0")),
  },
  {
    item: "issue 11 item 4: whenCaughtUp/describe compare with a stale source HW, a planned failover loses the tail",
    matches: (v) =>
      (v.invariant === "acked-durability" || v.invariant === "txn-committed") &&
      /planned failover|\(new primary\)|\(after failback\)/.test(v.message),
  },
  {
    item: "issue 11 item 5: a mirror loop is accepted at add time (refused only later, in PREPARING)",
    matches: (v) =>
      v.invariant === "mirror-loop-refused" ||
      (v.invariant === "converges" && v.message.includes("mirror loop")),
    taintsRun: true,
  },
  {
    item: "issue 11 item 6: a replica that recovers a corrupt segment to a shorter log leads and the others follow it",
    matches: (v) => v.invariant === "committed-prefix" && v.message.includes("once below the high watermark"),
    taintsRun: true,
  },
  {
    item: "issue 11 item 11: a repeated removeTopics is refused; an interrupted STOPPING resumes late",
    matches: (v) => v.invariant === "remove-idempotent" || v.invariant === "stopping-resumes",
  },
];

/** Every known-bug filter, applied by every topology property: the matching item, or undefined. */
export const KNOWN_ENGINE_BUGS: readonly ((v: Violation) => string | undefined)[] = OPEN.map(
  (bug) => (v: Violation) => (bug.matches(v) ? bug.item : undefined),
);

/** The known bug that broke this run (its other violations are consequences), or undefined. */
export function runTaintedBy(violations: readonly Violation[]): string | undefined {
  return OPEN.find((bug) => bug.taintsRun && violations.some(bug.matches))?.item;
}
