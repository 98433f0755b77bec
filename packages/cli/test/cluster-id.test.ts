import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MirrorNode } from "../src/node/mirror-node";
import { tempDir } from "./cli-harness";

const open: MirrorNode[] = [];
afterEach(() => {
  for (const n of open.splice(0)) n.close();
});

function start(dataDir: string, seed?: number): MirrorNode {
  const node = MirrorNode.start({
    name: "dr",
    brokers: 1,
    dataDir,
    sources: [{ name: "primary", brokers: 1 }],
    numStatePartitions: 1,
    fsync: false,
    ...(seed === undefined ? {} : { seed }),
  });
  open.push(node);
  return node;
}

const idIn = (dir: string) =>
  /cluster\.id=(\S+)/.exec(fs.readFileSync(path.join(dir, "meta.properties"), "utf8"))?.[1];

describe("cluster ids (issue 15, security)", () => {
  it("are random per fresh data dir, kept in meta.properties across restarts", () => {
    const a = tempDir("cm-id-a");
    const b = tempDir("cm-id-b");
    const first = start(a);
    const idA = first.destination.cluster.clusterId;
    const sourceA = first.cluster("primary").cluster.clusterId;
    const idB = start(b).destination.cluster.clusterId;
    expect(idA).not.toBe(idB);
    expect(sourceA).not.toBe(idA);
    expect(idIn(a)).toBe(idA);
    expect(idIn(path.join(a, "sources", "primary"))).toBe(sourceA);
    first.close();
    const again = start(a);
    expect(again.destination.cluster.clusterId).toBe(idA);
    expect(again.cluster("primary").cluster.clusterId).toBe(sourceA);
  });

  it("repeat only when a seed is asked for", () => {
    const x = start(tempDir("cm-id-x"), 5);
    const y = start(tempDir("cm-id-y"), 5);
    expect(x.destination.cluster.clusterId).toBe(y.destination.cluster.clusterId);
    expect(x.seed).toBe(5);
  });
});
