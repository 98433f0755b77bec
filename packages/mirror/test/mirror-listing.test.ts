import { describe, expect, it } from "vitest";
import type { ListMirrorsOptions, SourceCluster, SourceMirrorInfo } from "../src/ports";
import {
  listMirrorsWithUpstream,
  loopingMirror,
  loopPath,
  MAX_UPSTREAM_CLUSTERS,
} from "../src/source/mirror-listing";

/**
 * Clusters named by id, each running one mirror `m` of topic `t` from `from[id]`: the listing each answers,
 * with every ListClusterMirrors call it makes counted.
 */
function ring(from: Record<string, string>) {
  const calls: string[] = [];
  const list = (id: string, options?: ListMirrorsOptions): Promise<SourceMirrorInfo[]> => {
    calls.push(`${id} asked by [${(options?.askedBy ?? []).join(",")}]`);
    const source = from[id];
    const own = source === undefined ? [] : [{ name: `m-${id}`, sourceClusterId: source, topics: ["t"] }];
    return listMirrorsWithUpstream(
      id,
      own,
      () => ({ listMirrors: (o) => list(source!, o) }) as SourceCluster,
      options,
    );
  };
  return { list, calls };
}

describe("a cluster's mirror listing with its topics' upstream clusters", () => {
  it("follows a chain, nearest first, and names the loop it closes", async () => {
    // a <- b <- c: c mirrors t from b, which mirrors it from a.
    const { list } = ring({ b: "a", c: "b" });
    const listed = await list("c", { askedBy: ["a"] });
    expect(listed).toEqual([{ name: "m-c", sourceClusterId: "b", topics: ["t"], upstream: { t: ["a"] } }]);
    const loop = loopingMirror(listed, "t", "a");
    expect(loop?.name).toBe("m-c");
    expect(loopPath(loop!, "t", "a")).toBe("from cluster b, whose copy comes from this cluster (a)");
    expect(loopingMirror(listed, "t", "z")).toBeUndefined();
    expect(loopingMirror(listed, "other", "a")).toBeUndefined();
  });

  it("asks nobody further unless asked with askedBy (PREPARING's direct check)", async () => {
    const { list, calls } = ring({ b: "a", c: "b" });
    expect(await list("c")).toEqual([{ name: "m-c", sourceClusterId: "b", topics: ["t"] }]);
    expect(calls).toEqual(["c asked by []"]);
  });

  it("ends where a loop already exists, asking each cluster once", async () => {
    const { list, calls } = ring({ a: "c", b: "a", c: "b" });
    const listed = await list("a", { askedBy: [] });
    // b's source a is the first asker: b does not ask it again.
    expect(calls).toEqual(["a asked by []", "c asked by [a]", "b asked by [a,c]"]);
    expect(listed[0]?.upstream).toEqual({ t: ["b", "a"] });
    expect(loopingMirror(listed, "t", "a")).toBeDefined();
  });

  it("stops MAX_UPSTREAM_CLUSTERS away, and leaves the upstream of a source that does not answer unknown", async () => {
    const from: Record<string, string> = {};
    for (let i = 1; i <= 40; i++) from[`n${i}`] = `n${i - 1}`;
    const { list } = ring(from);
    const listed = await list("n40", { askedBy: [] });
    expect(listed[0]?.upstream?.t).toHaveLength(MAX_UPSTREAM_CLUSTERS);
    const down = await listMirrorsWithUpstream(
      "x",
      [{ name: "m", sourceClusterId: "y", topics: ["t"] }],
      () => ({ listMirrors: () => Promise.reject(new Error("unreachable")) }) as unknown as SourceCluster,
      { askedBy: [] },
    );
    expect(down).toEqual([{ name: "m", sourceClusterId: "y", topics: ["t"] }]);
  });
});
