import { distance } from "fastest-levenshtein";

/**
 * The known name closest to a misspelled one (`mirror.num.replica.fetcher` -> `mirror.num.replica.fetchers`),
 * for a "did you mean" hint; undefined when none is within a few edits. Edit distance is Levenshtein's, from
 * `fastest-levenshtein` (maintained, no dependencies), allowed up to a third of the name's length (at
 * least 1, at most 4): a typo, not a different word.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const limit = Math.min(4, Math.max(1, Math.floor(name.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}
