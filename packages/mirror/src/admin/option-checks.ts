import { ClusterError, shownValue as shown } from "@cluster-mirror/cluster";

/**
 * A caller's `timeoutMs` (or another wait in milliseconds): a whole number of 0 or more. NaN, a string or a
 * negative number would make a deadline that never passes (a comparison with NaN is false) or one that has
 * passed before the wait began, whose timeout then names the wrong cause.
 */
export function checkMillis(option: string, value: unknown): void {
  if (value === undefined || (Number.isSafeInteger(value) && (value as number) >= 0)) return;
  throw new ClusterError(
    "INVALID_REQUEST",
    `${option} must be a whole number of milliseconds, 0 or more; got ${shown(value)}. Leave it out for the default.`,
  );
}

/**
 * A topic selection (`addTopics`, `removeTopics`, `pauseTopics`, ...): a string, a name or a regular
 * expression's source text such as `"orders.*"`. A `RegExp` object or a missing argument otherwise fails
 * deep inside with a plain TypeError.
 */
export function checkTopicSelection(value: unknown): void {
  if (typeof value === "string") return;
  const hint =
    value instanceof RegExp
      ? `: pass its source as a string ("${value.source}"), not a RegExp object`
      : ': pass a topic name or a regular expression as a string, such as "orders" or "orders.*"';
  throw new ClusterError(
    "INVALID_REQUEST",
    `the topics to select must be a string, got ${shown(value)}${hint}`,
  );
}
