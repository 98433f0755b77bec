import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { Violation } from "./violation";

/** One ACTIVE mirror edge topic as the watch sees it: the two clusters and the topic. */
export interface ActiveEdgeTopic {
  mirror: string;
  topic: string;
  source: KafkaCluster;
  destination: KafkaCluster;
}

/**
 * The topic config sync never deletes a value the source still has: once an ACTIVE copy holds
 * `retention.ms`, it keeps one while the source has one (the copy may lag a change, never lose it).
 * Configs the source does not answer (DescribeConfigs refused, not asked for) are unknown, not empty.
 */
export class ConfigsKeptWatch {
  /** Per copy (mirror, topic, destination topic id): the destination's value last seen. */
  private readonly seen = new Map<string, string>();

  observe(active: readonly ActiveEdgeTopic[]): Violation[] {
    const out: Violation[] = [];
    const live = new Set<string>();
    for (const { mirror, topic, source, destination } of active) {
      const copy = destination.controller.image.topic(topic);
      if (!copy) continue;
      const key = `${mirror}\0${topic}\0${copy.topicId}`;
      live.add(key);
      const now = copy.configs.get("retention.ms");
      const before = this.seen.get(key);
      const atSource = source.controller.image.topic(topic)?.configs.get("retention.ms");
      if (before !== undefined && now === undefined && atSource !== undefined) {
        out.push({
          invariant: "configs-kept",
          message: `${mirror} ${topic}: the copy lost retention.ms=${before} while the source still has retention.ms=${atSource}`,
        });
      }
      if (now === undefined) this.seen.delete(key);
      else this.seen.set(key, now);
    }
    // A copy no longer ACTIVE starts over when it is again (its configs were its own meanwhile).
    for (const key of this.seen.keys()) if (!live.has(key)) this.seen.delete(key);
    return out;
  }
}
