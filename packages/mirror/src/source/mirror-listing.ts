import type { ListMirrorsOptions, SourceCluster, SourceMirrorInfo } from "../ports";

/** How far up a chain a listing follows, in clusters (and so how long a loop it can tell). */
export const MAX_UPSTREAM_CLUSTERS = 16;

/**
 * This cluster's answer to ListClusterMirrors (what a mirror of it checks for loops): each of its mirrors
 * (`own`). Asked with `askedBy` (an --add over a topic its destination holds as its own), each with, per
 * topic, the clusters its source's copy comes from (`upstream`: the source's own answer for that topic, its
 * mirror's source cluster first). So a loop of any length shows: on A, adding C's `orders` when C mirrors
 * it from B, which mirrors it from A, finds A in C's upstream for `orders`, before A's own topic goes
 * read-only and is truncated to C's copy. Each mirror's source is asked with this cluster added to
 * `askedBy` (not a source in `askedBy` already); a question that came round a loop back here (this cluster
 * is in `askedBy`), or from MAX_UPSTREAM_CLUSTERS away, is answered without asking further. A source that
 * does not answer leaves that mirror's upstream unknown (absent): the direct check (`sourceClusterId`)
 * still holds. Without `askedBy` (PREPARING's check, which KIP-1279 keeps direct) nothing is asked further.
 */
export async function listMirrorsWithUpstream(
  here: string,
  own: readonly SourceMirrorInfo[],
  sourceOf: (mirror: string) => SourceCluster | undefined,
  options: ListMirrorsOptions = {},
): Promise<SourceMirrorInfo[]> {
  const askedBy = options.askedBy;
  const plain = () =>
    own.map((m) => ({ name: m.name, sourceClusterId: m.sourceClusterId, topics: m.topics }));
  if (askedBy === undefined || askedBy.includes(here) || askedBy.length >= MAX_UPSTREAM_CLUSTERS)
    return plain();
  const next = [...askedBy, here];
  return Promise.all(
    own.map(async (m): Promise<SourceMirrorInfo> => {
      const listed = { name: m.name, sourceClusterId: m.sourceClusterId, topics: m.topics };
      // A mirror of a cluster the question came through: the asker's direct check sees that loop, and the
      // cluster would answer without asking further anyway.
      if (m.topics.length === 0 || askedBy.includes(m.sourceClusterId)) return listed;
      let theirs: SourceMirrorInfo[];
      try {
        theirs = (await sourceOf(m.name)?.listMirrors({ askedBy: next })) ?? [];
      } catch {
        return listed;
      }
      const upstream: Record<string, string[]> = {};
      for (const topic of m.topics) {
        const from = theirs.find((s) => s.topics.includes(topic));
        if (from === undefined) continue;
        upstream[topic] = [from.sourceClusterId, ...(from.upstream?.[topic] ?? [])].slice(
          0,
          MAX_UPSTREAM_CLUSTERS,
        );
      }
      return { ...listed, upstream };
    }),
  );
}

/**
 * The source's mirror through which mirroring `topic` from that source would come back to `here`: it
 * mirrors the topic from this very cluster, or from a cluster whose copy comes from it (a chain closing
 * into a loop). Undefined when there is none.
 */
export function loopingMirror(
  mirrors: readonly SourceMirrorInfo[],
  topic: string,
  here: string,
): SourceMirrorInfo | undefined {
  return mirrors.find(
    (m) =>
      m.topics.includes(topic) && (m.sourceClusterId === here || (m.upstream?.[topic] ?? []).includes(here)),
  );
}

/**
 * How `mirror` (a source's mirror `loopingMirror` found) leads back to `here` for `topic`: "from this
 * cluster" for a direct loop, else "from cluster X, whose copy comes from this cluster" (through the
 * clusters between, when there are any).
 */
export function loopPath(mirror: SourceMirrorInfo, topic: string, here: string): string {
  if (mirror.sourceClusterId === here) return `from this cluster (${here})`;
  const upstream = mirror.upstream?.[topic] ?? [];
  const between = upstream.slice(0, upstream.indexOf(here));
  const through = between.length === 0 ? "" : ` through ${between.join(", ")}`;
  return `from cluster ${mirror.sourceClusterId}, whose copy comes${through} from this cluster (${here})`;
}
