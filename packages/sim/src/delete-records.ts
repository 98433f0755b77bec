import { leaderLog } from "./invariants/logs";
import type { Simulation } from "./simulation";
import { describeError, pick, produce } from "./workload";

/**
 * An application purges records (DeleteRecords: a poison record, personal data): the log start of a
 * partition moves up by a quarter to all of what lies below its high watermark. `onCopy` 0 purges a
 * primary (a writable (node, topic); an empty partition gets a produce first), and mirrors copying it
 * follow the new log start (`log.start.offset.sync.enable`): the broker guard checks every such move
 * (`LogStartWatch`). `onCopy` 1 purges a mirror's copy (an ACTIVE or PAUSED edge topic) on its own, as an
 * operator may on a DR cluster: its copy then starts above its source's, through every later truncation,
 * failover and failback.
 */
export async function deleteRecords(
  sim: Simulation,
  target: number,
  partitionChoice: number,
  quarters: number,
  onCopy = 0,
): Promise<void> {
  const copies = sim
    .edgeTopics((s) => s === "ACTIVE" || s === "PAUSED")
    .map(({ edge, topic }) => ({ node: edge.to, topic }));
  const t = pick(onCopy % 2 === 1 ? copies : sim.writableTargets(), target);
  if (!t) {
    sim.step(`delete records: ${onCopy % 2 === 1 ? "no mirror copy" : "nothing writable"}`);
    return;
  }
  const cluster = sim.node(t.node).cluster;
  const partitions = cluster.controller.image.topic(t.topic)?.partitions.length ?? 0;
  if (partitions === 0) return;
  const partition = Math.abs(partitionChoice) % partitions;
  // Nothing below the high watermark yet: the application writes a few records first, so there is
  // something to purge (and the purge may overtake the copy).
  let log = leaderLog(cluster, t.topic, partition);
  if (log && log.highWatermark === log.logStartOffset && onCopy % 2 === 0) {
    await produce(sim, target, partition, 3);
    log = leaderLog(cluster, t.topic, partition);
  }
  if (!log) {
    sim.step(`delete records ${t.node}/${t.topic}-${partition}: no running leader`);
    return;
  }
  const span = log.highWatermark - log.logStartOffset;
  const offset = log.logStartOffset + (span * BigInt(1 + (Math.abs(quarters) % 4))) / 4n;
  try {
    await sim.world.time.run(
      sim
        .node(t.node)
        .kafka.admin()
        .deleteTopicRecords({ topic: t.topic, partitions: [{ partition, offset: String(offset) }] }),
      120_000,
    );
    sim.step(`delete records ${t.node}/${t.topic}-${partition} before ${offset}`);
  } catch (error) {
    sim.step(`delete records ${t.node}/${t.topic}-${partition} before ${offset}: ${describeError(error)}`);
  }
}
