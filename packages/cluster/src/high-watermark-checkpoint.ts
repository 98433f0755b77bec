/** Name of the file a broker keeps its partitions' high watermarks in (Kafka's name). */
export const HIGH_WATERMARK_CHECKPOINT = "replication-offset-checkpoint";

/** Formats high watermarks in Kafka's checkpoint text format: version, count, then `topic partition offset`. */
export function formatHighWatermarks(entries: ReadonlyMap<string, bigint>): string {
  const lines = [...entries].map(([tp, hw]) => {
    const cut = tp.lastIndexOf("-");
    return `${tp.slice(0, cut)} ${tp.slice(cut + 1)} ${hw}`;
  });
  return `0\n${lines.length}\n${lines.join("\n")}${lines.length ? "\n" : ""}`;
}

/** Parses a high-watermark checkpoint into `topic-partition -> offset`; a damaged file yields no entries. */
export function parseHighWatermarks(text: string | undefined): Map<string, bigint> {
  const out = new Map<string, bigint>();
  if (!text) return out;
  const lines = text.split("\n").filter((l) => l.length > 0);
  if (lines[0] !== "0") return out;
  for (const line of lines.slice(2)) {
    const m = /^(\S+) (\d+) (\d+)$/.exec(line);
    if (m) out.set(`${m[1]}-${m[2]}`, BigInt(m[3]!));
  }
  return out;
}
