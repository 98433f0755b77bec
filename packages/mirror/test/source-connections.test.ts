import { describe, expect, it } from "vitest";
import { SourceConnections } from "../src/metadata/source-connections";
import type { SourceCluster, SourceConnector } from "../src/ports";

/** A connector whose sources only say which connection they are and whether they were closed. */
function countingConnector() {
  const opened: { id: number; configs: Readonly<Record<string, string>>; closed: boolean }[] = [];
  const connector: SourceConnector = {
    connect: (_mirror, configs) => {
      const entry = { id: opened.length, configs, closed: false };
      opened.push(entry);
      return {
        close: async () => {
          entry.closed = true;
        },
      } as unknown as SourceCluster;
    },
  };
  return { connector, opened };
}

const created = { "bootstrap.servers": "source:9092", "security.protocol": "PLAINTEXT" };

describe("SourceConnections", () => {
  it("keeps one connection when only the mirror's own settings change (the pinned cluster id, fetchers, filters)", () => {
    const { connector, opened } = countingConnector();
    const connections = new SourceConnections(connector);
    const first = connections.get("m", created);
    // What createMirror stores adds the source cluster id; later admin calls pass the stored configs.
    const stored = { ...created, "source.cluster.id": "abc", "mirror.num.replica.fetchers": "4" };
    expect(connections.get("m", stored)).toBe(first);
    expect(connections.get("m", created)).toBe(first);
    expect(connections.get("m", { ...stored, "topics.include": "orders.*" })).toBe(first);
    expect(opened.map((o) => o.closed)).toEqual([false]);
  });

  it("opens a new connection when how to reach the source changes, and closes the old one", async () => {
    const { connector, opened } = countingConnector();
    const connections = new SourceConnections(connector);
    const first = connections.get("m", created);
    const second = connections.get("m", { ...created, "bootstrap.servers": "other:9092" });
    expect(second).not.toBe(first);
    const third = connections.get("m", { ...created, "bootstrap.servers": "other:9092", "client.id": "x" });
    expect(third).not.toBe(second);
    await Promise.resolve();
    expect(opened.map((o) => o.closed)).toEqual([true, true, false]);
    // A deleted mirror's connection is closed too; the next use connects again.
    connections.drop("m");
    await Promise.resolve();
    expect(opened.map((o) => o.closed)).toEqual([true, true, true]);
    expect(connections.get("m", created)).not.toBe(third);
    expect(opened).toHaveLength(4);
  });
});
