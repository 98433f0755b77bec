import {
  allowRejoinTruncation,
  FAILOVER_MODES,
  failedOverTopics,
  failoverTopic,
  isClientTimeout,
} from "./operator";
import type { Simulation } from "./simulation";
import { type MirrorEdge, mirrorName } from "./topology";
import { describeError, pick, txnEnd } from "./workload";

/** One side of a loop race: `edge.to`'s admin adds the topic to its mirror of `edge.from`. */
export interface Side {
  edge: MirrorEdge;
  what: string;
  truncateLocalWrites: boolean;
}

/**
 * A mirror loop formed concurrently from both sides (issue 11 item 5b): after a failover on edge
 * from -> to (done first, unplanned, when no topic is failed over), two admins act at once on the same
 * topic, one on each cluster: `to`'s re-adds it to its mirror of `from` while `from`'s fails it back (adds
 * it to its mirror of `to`, created first if needed). Each `--add` checks for a loop before the other one
 * changed anything, so both may be accepted; the engine must then refuse the loop in PREPARING (FAILED)
 * before it changes a log. The admins resolve it as an operator would: every side that is not MIRRORING
 * once PREPARING is over is removed again (a failover of a FAILED partition; `order` picks which side goes
 * first, `mode` whether they wait for STOPPED). Both sides MIRRORING is an accepted loop (a violation). A
 * failover of a partition whose log never held mirrored data must leave its producer state alone (checked
 * as STOPPED commits, `UnmirroredFailoverWatch`). `truncate` bit 0 (re-add) and bit 1 (failback): that
 * admin passes --truncate-local-writes (a re-add after the new primary took writes is refused without it).
 */
export async function loopRace(
  sim: Simulation,
  choice: number,
  order: number,
  mode: number,
  truncate: number,
): Promise<void> {
  const failedOver = () => failedOverTopics(sim);
  if (failedOver().length === 0) {
    // Nothing failed over yet: the operator fails a mirrored topic over first (waiting for STOPPED).
    const mirrored = pick(
      sim.edgeTopics((s) => s === "ACTIVE" || s === "PAUSED"),
      choice,
    );
    if (mirrored) await failoverTopic(sim, mirrored.edge, mirrored.topic, "unplanned");
  }
  const et = pick(failedOver(), choice);
  if (!et) {
    sim.step("loop race: nothing failed over");
    return;
  }
  const { edge, topic } = et;
  let reverse = sim.edges.find((e) => e.from === edge.to && e.to === edge.from);
  try {
    if (!reverse) {
      reverse = { from: edge.to, to: edge.from, mirror: mirrorName(edge.to, edge.from) };
      await sim.world.time.run(
        sim
          .node(edge.from)
          .mirroring.admin.createMirror(reverse.mirror, { "bootstrap.servers": `${edge.to}:9092` }),
      );
      sim.edges.push(reverse);
    }
    // Both topics are about to become mirrors: their admins end open transactions first (as a failback does).
    if (sim.openTxn?.topic === topic) await txnEnd(sim, false);
  } catch (error) {
    sim.step(`loop race ${edge.from} <-> ${edge.to} ${topic}: ${describeError(error)}`);
    return;
  }
  const sides: Side[] = [
    { edge, what: "re-add", truncateLocalWrites: (Math.abs(truncate) & 1) === 1 },
    { edge: reverse, what: "failback", truncateLocalWrites: (Math.abs(truncate) & 2) === 2 },
  ];
  // Each side may truncate only what its own add could (see `rejoin`).
  const allowances = sides.map((s) =>
    allowRejoinTruncation(sim, s.edge, topic, `loop race ${s.what}`, !s.truncateLocalWrites),
  );
  const outcomes = await sim.world.time.run(
    Promise.allSettled(
      sides.map((s) =>
        sim
          .node(s.edge.to)
          .mirroring.admin.addTopics(s.edge.mirror, topic, { truncateLocalWrites: s.truncateLocalWrites }),
      ),
    ),
    240_000,
  );
  const accepted = sides.filter((s, i) => {
    const before = sim.edgeState(s.edge, topic);
    const state = sim.syncEdgeState(s.edge, topic);
    const outcome = outcomes[i]!;
    // A refused add changes nothing (soak `active-passive` FC_SEED=24 x100: a re-add refused for a
    // partition it could not place had set mirror.name first).
    if (outcome.status === "rejected" && state !== before && !isClientTimeout(outcome.reason)) {
      sim.report([
        {
          invariant: "refused-op-atomic",
          message: `${s.edge.to} ${s.what} ${s.edge.mirror} ${topic} was refused (${describeError(outcome.reason).split(":")[0]}) but mirror.name moved the topic from ${before} to ${state}`,
        },
      ]);
    }
    if (state !== "ACTIVE") for (const a of allowances[i]!) sim.prefix.withdraw(a);
    return state === "ACTIVE";
  });
  sim.step(
    `loop race ${topic}: ${sides
      .map((s, i) => {
        const o = outcomes[i]!;
        return `${s.what}${s.truncateLocalWrites ? " --truncate-local-writes" : ""} ${s.edge.mirror} -> ${o.status === "fulfilled" ? "ok" : describeError(o.reason).split(":")[0]}`;
      })
      .join(" | ")}`,
  );
  if (accepted.length < 2) {
    // The one accepted side's topic is a mirror now (PREPARING may truncate it): its own committed
    // transactions are the mirror's from here on, as after `rejoin`.
    markRejoined(sim, accepted, topic);
    return;
  }
  await resolveRacedLoop(sim, sides, topic, order, mode);
}

/**
 * Both sides of a loop on `topic` were accepted (added at the same time, from both clusters): waits until
 * PREPARING is over on both (MIRRORING or FAILED), then removes the topic from every side that is not
 * MIRRORING, as an operator would (`order` picks which goes first, `mode` whether they wait for STOPPED).
 * Both MIRRORING is an accepted loop (a violation). Used by `loopRace` and by `concurrent` when its two
 * re-adds were the two sides of a loop.
 */
export async function resolveRacedLoop(
  sim: Simulation,
  sides: readonly Side[],
  topic: string,
  order: number,
  mode: number,
): Promise<void> {
  const [{ edge }, reverse] = sides as [Side, Side];
  const views = (s: Side) =>
    sim
      .node(s.edge.to)
      .mirroring.coordinators.describe(s.edge.mirror)
      .filter((v) => v.key.topic === topic);
  const partitions = sim.node(edge.to).cluster.controller.image.topic(topic)?.partitions.length ?? 0;
  const settled = (s: Side) =>
    views(s).length >= partitions && views(s).every((v) => v.state === "MIRRORING" || v.state === "FAILED");
  await sim.world.time
    .until(() => sides.every(settled), `loop race ${topic}: PREPARING over`, 60_000, 100)
    .catch(() => undefined);
  const mirroring = (s: Side) =>
    views(s).length >= partitions && views(s).every((v) => v.state === "MIRRORING");
  let remove = sides.filter((s) => !mirroring(s));
  if (remove.length === 0) {
    sim.report([
      {
        invariant: "mirror-loop-refused",
        message: `${topic}: ${edge.mirror} and ${reverse.edge.mirror}, added at the same time, both mirror it: a mirror loop`,
      },
    ]);
    remove = [sides[1]!];
  }
  sim.step(
    `loop race ${topic}: ${sides
      .map(
        (s) =>
          `${s.edge.mirror} ${views(s)
            .map((v) => `${v.key.partition}:${v.state}`)
            .join(",")}`,
      )
      .join(" | ")}`,
  );
  if (Math.abs(order) % 2 === 1) remove.reverse();
  // The operator's way out of a loop: remove the topic from the mirror that is not mirroring.
  const how = FAILOVER_MODES[Math.abs(mode) % 2 === 0 ? 1 : 3]!;
  for (const s of remove) await failoverTopic(sim, s.edge, topic, how);
  markRejoined(
    sim,
    sides.filter((s) => sim.edgeState(s.edge, topic) === "ACTIVE"),
    topic,
  );
}

/** Stops checking the sides' own committed transactions on `topic` on their nodes (their mirror replaces them). */
function markRejoined(sim: Simulation, sides: readonly Side[], topic: string): void {
  for (const s of sides) {
    for (const c of sim.model.commits) if (c.node === s.edge.to && c.topic === topic) c.rejoined = true;
  }
}
