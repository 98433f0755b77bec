import type { MirrorDescribeRow } from "@cluster-mirror/mirror";
import { MultiBar, Presets } from "cli-progress";
import type { MirrorNode, NodeCluster } from "../node/mirror-node";
import type { DemoPrinter } from "./printer";
import { waitUntil } from "./wait";

/** Sums of one topic's mirror partitions. */
interface TopicLag {
  topic: string;
  source: bigint;
  destination: bigint;
  lag: bigint;
  states: Set<string>;
}

/**
 * Shows one progress bar per topic (destination offset over source offset, lag in the label) until every
 * partition of `mirror` is MIRRORING with lag 0; on a terminal the bars move, otherwise one line per topic
 * is printed at the end.
 */
export async function showLagUntilCaughtUp(
  node: MirrorNode,
  destination: NodeCluster,
  mirror: string,
  partitions: number,
  printer: DemoPrinter,
  interactive: boolean,
): Promise<void> {
  const bars = interactive
    ? new MultiBar(
        {
          format: "   {topic} [{bar}] {value}/{total} offsets, lag {lag}",
          hideCursor: true,
          clearOnComplete: false,
        },
        Presets.shades_classic,
      )
    : undefined;
  const byTopic = new Map<string, ReturnType<MultiBar["create"]>>();
  let last: TopicLag[] = [];
  const update = (rows: readonly MirrorDescribeRow[]) => {
    last = summarize(rows);
    for (const t of last) {
      const payload = { topic: t.topic.padEnd(9), lag: String(t.lag), states: [...t.states].join("/") };
      let bar = byTopic.get(t.topic);
      if (!bar && bars) {
        bar = bars.create(Number(t.source), 0, payload);
        byTopic.set(t.topic, bar);
      }
      bar?.setTotal(Number(t.source));
      bar?.update(Number(t.destination), payload);
    }
  };
  await waitUntil(node, `mirror ${mirror} to catch up`, async () => {
    const rows = await destination.mirroring.admin.describe(mirror);
    update(rows);
    return rows.length === partitions && rows.every((r) => r.state === "MIRRORING" && r.lag === 0n);
  });
  bars?.stop();
  if (!interactive) {
    for (const t of last) {
      printer.line(`${t.topic.padEnd(9)} ${t.destination}/${t.source} offsets mirrored, lag ${t.lag}`);
    }
  }
}

function summarize(rows: readonly MirrorDescribeRow[]): TopicLag[] {
  const topics = new Map<string, TopicLag>();
  for (const r of rows) {
    const t = topics.get(r.topic) ?? {
      topic: r.topic,
      source: 0n,
      destination: 0n,
      lag: 0n,
      states: new Set(),
    };
    t.source += r.sourceOffset ?? 0n;
    t.destination += r.destinationOffset !== null && r.destinationOffset > 0n ? r.destinationOffset : 0n;
    t.lag += r.lag ?? 0n;
    t.states.add(r.state);
    topics.set(r.topic, t);
  }
  return [...topics.values()];
}
