import { ClusterError } from "@cluster-mirror/cluster";
import type { RefusedTopicConfig } from "./topic-configs";

/**
 * The source config values this cluster refused, by mirror and topic, so each is reported once rather than
 * on every refresh (a refresh runs every 30 s, and the value stays refused until someone changes it). A
 * value that changes, or that was accepted in between, is reported again.
 */
export class RefusedConfigReports {
  private readonly byMirror = new Map<string, Map<string, ReadonlyMap<string, string>>>();

  /** Records what `topic`'s source configs have refused now; returns those not reported before. */
  newlyRefused(mirror: string, topic: string, refused: readonly RefusedTopicConfig[]): RefusedTopicConfig[] {
    const byTopic = this.byMirror.get(mirror) ?? new Map<string, ReadonlyMap<string, string>>();
    const before = byTopic.get(topic);
    const fresh = refused.filter((r) => before?.get(r.name) !== r.value);
    if (refused.length === 0) byTopic.delete(topic);
    else byTopic.set(topic, new Map(refused.map((r) => [r.name, r.value])));
    if (byTopic.size === 0) this.byMirror.delete(mirror);
    else this.byMirror.set(mirror, byTopic);
    return fresh;
  }

  forgetMirror(mirror: string): void {
    this.byMirror.delete(mirror);
  }
}

/**
 * The sync error for a refused value: what was refused and why, what the topic keeps meanwhile, and what
 * the operator can do about it.
 */
export function refusedConfigError(
  mirror: string,
  topic: string,
  refused: RefusedTopicConfig,
  kept: string | undefined,
): ClusterError {
  const keeps = kept === undefined ? "its default" : `${refused.name}=${JSON.stringify(kept)}`;
  return new ClusterError(
    "INVALID_CONFIG",
    `mirror '${mirror}', topic '${topic}': this cluster refuses the source's ${refused.name}=${JSON.stringify(refused.value)} (${refused.problem}); the topic's other configs are synced without it and it keeps ${keeps}. Set a value this cluster accepts on the source topic, or add '${refused.name}' to the mirror's topic.properties.exclude to stop syncing it`,
  );
}
