/**
 * The known name closest to a misspelled one (`mirror.num.replica.fetcher` -> `mirror.num.replica.fetchers`),
 * for a "did you mean" hint; undefined when none is within a few edits. Edit distance is Levenshtein's,
 * allowed up to a third of the name's length (at least 1, at most 4), as a typo, not a different word.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const limit = Math.min(4, Math.max(1, Math.floor(name.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance (insertions, deletions, substitutions), one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length]!;
}
