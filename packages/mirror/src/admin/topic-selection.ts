import { ClusterError } from "@cluster-mirror/cluster";
import { InvalidMirrorStateError, isLifecycleState, type LifecycleState } from "@cluster-mirror/machines";
import type { DesiredMirrorState, MirrorTopic } from "../metadata/mirror-topics";
import type { MirrorPartitionView } from "../ports";
import { compilePattern } from "./mirror-config";

/** How an error names a topic's desired state. */
const DESIRED_WORDS: Readonly<Record<DesiredMirrorState, string>> = {
  ACTIVE: "mirrored",
  PAUSED: "paused",
  REMOVED: "removed",
};

/** "a", "a or b", "a, b or c". */
function orList(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}

/** Compiles the `--topic` regex (whole-name match); INVALID_CONFIG naming the pattern when it does not compile. */
export function topicPattern(regex: string): RegExp {
  return compilePattern(
    "--topic",
    regex,
    "one regex matching whole topic names, e.g. 'orders|payments' for two topics, '.*' for all",
  );
}

/**
 * A `--topic` regex matching exactly these topic names and no other (each escaped, joined by `|`), e.g. for
 * `removeTopics` / `promoteTopics` of names a program holds.
 */
export function exactTopicPattern(names: readonly string[]): string {
  return names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
}

/**
 * What to say about a pattern that matched nothing because it was written as a list (`orders,payments`:
 * one regex is taken, and alternation lists several) or as a shell glob (`ord*`: the regex `ord.*` is
 * meant). Empty otherwise.
 */
export function patternHint(regex: string): string {
  // A shell glob (`ord*`) reads as a regex whose star repeats the letter before it: say so.
  if (!regex.includes(",")) {
    const glob = /^[\w.-]*\*[\w.*-]*$/.test(regex) && !regex.includes(".*");
    return glob
      ? ` '${regex}' looks like a glob: the pattern is a regex, where '*' repeats what comes before it; for topics starting with '${regex.split("*")[0]}' use '${regex.replaceAll("*", ".*")}'.`
      : "";
  }
  const alternation = regex
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .join("|");
  return ` '${regex}' has a comma: the pattern is one regex, not a list; for several topics use alternation, e.g. '${alternation}'.`;
}

/**
 * The mirror's topics that `regex` selects among those in `from` states; UNKNOWN_TOPIC_OR_PARTITION naming the
 * mirror when none is.
 */
export function selectMirrorTopics(
  mirror: string,
  regex: string,
  topics: readonly MirrorTopic[],
  from: readonly DesiredMirrorState[],
): MirrorTopic[] {
  const pattern = topicPattern(regex);
  const selected = topics.filter((t) => from.includes(t.desired) && pattern.test(t.name));
  if (selected.length === 0) {
    const inMirror = topics.filter((t) => from.includes(t.desired)).map((t) => t.name);
    const elsewhere = topics.filter((t) => !from.includes(t.desired) && pattern.test(t.name));
    const taken = orList(from.map((d) => DESIRED_WORDS[d]));
    const why =
      elsewhere.length === 0
        ? "the pattern must match whole topic names"
        : `it matches ${elsewhere.map((t) => `${t.name} (${DESIRED_WORDS[t.desired]})`).join(", ")}, and this command takes only ${taken} topics`;
    // Matching only topics failed over (or failing over, e.g. after a crash inside a --promote): adding them
    // would mirror them again (a failback), not finish the failover, so that is not the advice.
    const removed = elsewhere.length > 0 && elsewhere.every((t) => t.desired === "REMOVED");
    const advice = removed
      ? `${orList(elsewhere.map((t) => t.name))} ${elsewhere.length === 1 ? "was" : "were"} failed over already (a --remove or --promote began it, and it ends STOPPED on its own, ` +
        `writable): nothing to do; --describe --mirror ${mirror} shows whether it is STOPPED yet. (--add would mirror ${elsewhere.length === 1 ? "it" : "them"} again, a failback.)`
      : `Add topics with --add --topic REGEX --mirror ${mirror}.`;
    throw new ClusterError(
      "UNKNOWN_TOPIC_OR_PARTITION",
      `No topic of mirror '${mirror}' matches '${regex}' (${why}; ` +
        `${taken} topics in the mirror: ${inMirror.length === 0 ? "none" : inMirror.join(", ")}). ` +
        `${advice}${patternHint(regex)}`,
    );
  }
  return selected;
}

/**
 * Checks, before anything changes, that every partition of `topics` can take `command` or has already
 * reached its target (`done` states); throws the partition-level InvalidMirrorStateError otherwise, naming
 * the topic-partition, its state and what to wait for.
 */
export function checkPartitionStates(
  command: "PAUSE" | "RESUME" | "START",
  topics: readonly MirrorTopic[],
  views: ReadonlyMap<string, MirrorPartitionView>,
  allowed: readonly LifecycleState[],
): void {
  for (const topic of topics) {
    for (let p = 0; p < topic.partitionCount; p++) {
      const raw = views.get(`${topic.name}:${p}`)?.state ?? "UNKNOWN";
      const state: LifecycleState = isLifecycleState(raw) ? raw : "UNKNOWN";
      if (allowed.includes(state)) continue;
      throw new InvalidMirrorStateError(
        state,
        command,
        null,
        `Cannot ${command} mirror partition ${topic.name}-${p} in state ${state}: ${command} is accepted only in ` +
          `${allowed.join(", ")}. Wait until it gets there (--describe --mirror ${topic.mirror}), then retry.`,
      );
    }
  }
}

/** `[t1, t2]`, the seeds' topic list format. */
export function topicList(names: readonly string[]): string {
  return `[${names.join(", ")}]`;
}

/**
 * The topics of `topics` that a `--pause` / `--resume` left as they were: asked for `desired` already (so
 * the call did not rewrite their `mirror.name`) and sent no command by the call (`driven.commanded`), each
 * with the states of its partitions other than `done` in the views the call last drove from (none: every
 * partition is there already; else e.g. PAUSING on its way, or FAILED, which retries on its own).
 */
export function untouchedTopics(
  topics: readonly MirrorTopic[],
  driven: { commanded: ReadonlySet<string>; views: ReadonlyMap<string, MirrorPartitionView> },
  desired: DesiredMirrorState,
  done: LifecycleState,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const t of topics) {
    if (t.desired !== desired || driven.commanded.has(t.name)) continue;
    const states = new Set<string>();
    for (let p = 0; p < t.partitionCount; p++) {
      const state = driven.views.get(`${t.name}:${p}`)?.state ?? "UNKNOWN";
      if (state !== done) states.add(state);
    }
    out.set(t.name, [...states].sort());
  }
  return out;
}

/**
 * The message of `--pause` / `--resume`: the seeds' `<Verb> mirroring for N topic(s): [..]` for the topics
 * it changed, then the matched ones it left as they were: `; 1 already paused: [t]` (every partition there)
 * and `; 1 unchanged: [t (PREPARING)]` (on their way, or FAILED: retrying, or waiting for the operator).
 */
export function topicsChangedMessage(
  verb: "Paused" | "Resumed",
  names: readonly string[],
  untouched: ReadonlyMap<string, readonly string[]>,
): string {
  const changed = names.filter((n) => !untouched.has(n));
  const already = names.filter((n) => untouched.get(n)?.length === 0);
  const other = names.filter((n) => (untouched.get(n)?.length ?? 0) > 0);
  let message = `${verb} mirroring for ${changed.length} topic(s): ${topicList(changed)}`;
  if (already.length > 0)
    message += `; ${already.length} ${verb === "Paused" ? "already paused" : "already mirroring"}: ${topicList(already)}`;
  if (other.length > 0) {
    const states = other.map((n) => `${n} (${untouched.get(n)!.join(", ")})`);
    const failed = other.some((n) => untouched.get(n)!.includes("FAILED"));
    message += `; ${other.length} unchanged: ${topicList(states)}`;
    if (failed)
      message +=
        " (FAILED partitions retry on their own or wait for a remove and add: see --describe --failed)";
  }
  return message;
}
