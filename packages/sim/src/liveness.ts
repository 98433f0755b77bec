import type { KafkaCluster } from "@cluster-mirror/cluster";
import { NON_RETRYABLE_ATTEMPT } from "@cluster-mirror/machines";
import { leaderLog } from "./invariants/logs";
import type { Simulation } from "./simulation";
import type { MirrorEdge } from "./topology";

/**
 * Liveness of operator commands on a healthy cluster. After a command that asks a mirror topic's
 * partitions to move (a removal to STOPPED, a pause to PAUSED, a resume or an add to MIRRORING), every
 * partition must reach that state within {@link LIVENESS_BOUND_MS} of virtual time plus four fsyncs of the
 * slowest disk involved: well before the metadata manager's refresh (30 s), so a command that only a
 * refresh would send, a retry backoff that should not apply or a lost wake-up is caught.
 *
 * The check does not wait: the expectation is registered when the command returns and decided when virtual
 * time passes its deadline (after the next commands, or at the start of the settle), from the committed
 * transitions it saw meanwhile, so the property's next commands still land where they did (inside a
 * PREPARING or a STOPPING). It only holds on a cluster that stays healthy the whole window: an expectation
 * is dropped when, before its deadline,
 * - a broker of the destination (or, for a state that needs the source, of the source) stops or starts, is
 *   cut off from the others, or its disk fills or gets slower;
 * - that cluster's controller becomes unavailable;
 * - the link between the two clusters (when the source is needed) is cut, slowed or refuses configs;
 * - the topic's `mirror.name` is changed to something else (a later command asked for another state), or
 *   the topic is deleted.
 */
export const LIVENESS_BOUND_MS = 15_000;

/** The states of a partition whose fetcher copies from the source. */
export const MIRRORING_STATES: readonly string[] = ["MIRRORING", "EPOCH_FENCING"];

/** Where one expectation's partitions must get to, and what it needs. */
export interface LivenessRequest {
  /** The invariant reported when it does not hold (`pause-ends`, `resume-mirrors`, ...). */
  invariant: string;
  /** What the operator did, for the report (`pause b<-a orders`). */
  what: string;
  edge: MirrorEdge;
  topic: string;
  /** States that count as arrived (a committed transition to one of them, or the state at registration). */
  targets: readonly string[];
  /** Whether getting there needs the source (its cluster and the link to it healthy too). */
  needsSource: boolean;
  /**
   * Partitions left out from the start, with why (a partition FAILED before a command that does not act
   * on FAILED keeps its own retry schedule).
   */
  exclude?: (view: { state: string; retryAttempt: number }) => string | undefined;
  /**
   * Also: the copy's high watermark reaches the source's as the command returned (what there was to copy
   * then), so a partition MIRRORING with no fetcher running is caught too.
   */
  catchUp?: boolean;
}

interface Expectation extends LivenessRequest {
  node: string;
  topicId: string;
  mirrorName: string | undefined;
  partitions: number[];
  registeredAt: number;
  deadline: number;
  /** Partition -> virtual time it first reached a target state. */
  reached: Map<number, number>;
  /** With `catchUp`: partition -> the source's high watermark when the command returned. */
  sourceEnds: Map<number, bigint>;
  /** With `catchUp`: partition -> virtual time its copy's high watermark first got there. */
  caught: Map<number, number>;
  /** Why it was dropped (undefined: still in force). */
  dropped?: string;
}

/** Counts over all runs of a process (printed by the harness with LIVENESS_STATS=1). */
export const livenessCounts = new Map<
  string,
  { checked: number; held: number; dropped: number; why: Map<string, number> }
>();

function count(invariant: string, outcome: "held" | "dropped" | "failed", why?: string): void {
  const c = livenessCounts.get(invariant) ?? { checked: 0, held: 0, dropped: 0, why: new Map() };
  if (why !== undefined) {
    const k = why.replace(/\d+/g, "N").replace(/ of \w+/g, "");
    c.why.set(k, (c.why.get(k) ?? 0) + 1);
  }
  if (outcome === "dropped") c.dropped++;
  else {
    c.checked++;
    if (outcome === "held") c.held++;
  }
  livenessCounts.set(invariant, c);
}

/** A healthy cluster: its controller active, every broker running, reachable and with disk space. */
export function clusterHealthy(cluster: KafkaCluster, brokers: number): boolean {
  const running = cluster.runningBrokers();
  return (
    cluster.controller.isAvailable &&
    running.length === brokers &&
    running.every((b) => cluster.isReachable(b) && !cluster.isDiskFull(b))
  );
}

/** The latency of the slowest disk of `cluster`'s brokers, in ms (each fsync waits that long). */
export function slowestDisk(cluster: KafkaCluster, brokers: number): number {
  let slowest = 0;
  for (let b = 0; b < brokers; b++) slowest = Math.max(slowest, cluster.diskLatency(b));
  return slowest;
}

/** The pending liveness expectations of one simulation (see the module's comment). */
export class LivenessWatch {
  private pending: Expectation[] = [];
  private readonly faultWatchers = new Set<{ node: string; why: string | undefined }>();

  constructor(private readonly sim: Simulation) {}

  /** Hooks the watch to every cluster of the world (called once, at the simulation's construction). */
  install(): void {
    for (const name of this.sim.world.spec.clusters) this.installOn(name);
  }

  /** Hooks the watch to the node of cluster `name` (again after a node restart: a new process). */
  installOn(name: string): void {
    const sim = this.sim;
    const { cluster, mirroring } = sim.node(name);
    cluster.onBrokerChange((id, running) =>
      this.disturb(name, `broker ${id} of ${name} ${running ? "started" : "stopped"}`),
    );
    // Each fault setter, patched to say when it changes something (the settle's heals of healthy
    // clusters change nothing).
    const patch = <K extends "setDiskFull" | "setDiskLatency" | "setReachable">(
      method: K,
      read: (id: number) => unknown,
      why: string,
    ) => {
      const original = cluster[method].bind(cluster) as (id: number, value: never) => void;
      (cluster as unknown as Record<K, (id: number, value: never) => void>)[method] = (id, value) => {
        const before = read(id);
        original(id, value);
        if (read(id) !== before) this.disturb(name, `${why} (broker ${id} of ${name})`);
      };
    };
    patch("setDiskFull", (id) => cluster.isDiskFull(id), "disk full or freed");
    patch("setDiskLatency", (id) => cluster.diskLatency(id), "disk latency changed");
    patch("setReachable", (id) => cluster.isReachable(id), "broker reachability changed");
    const controller = cluster.controller;
    const setAvailable = controller.setAvailable.bind(controller);
    controller.setAvailable = (available: boolean) => {
      const before = controller.isAvailable;
      setAvailable(available);
      if (controller.isAvailable !== before)
        this.disturb(name, `controller of ${name} ${available ? "back" : "unavailable"}`);
    };
    controller.subscribe(({ record }) => {
      if (record.type === "Config" && record.resourceType === "topic" && record.name === "mirror.name") {
        this.supersede(name, record.resourceName, record.value ?? undefined);
      } else if (record.type === "RemoveTopic") {
        // The copy deleted, or (when the source is needed) its source topic: a recreated source topic
        // fails its copies for good after two refreshes, retrying meanwhile.
        for (const e of this.pending) {
          if (e.topicId !== String(record.topicId)) continue;
          if (e.node === name) this.drop(e, "topic deleted");
          else if (e.needsSource && e.edge.from === name) this.drop(e, "source topic deleted");
        }
      }
    }, controller.metadataLog().length);
    mirroring.subscribeTransitions((t) => {
      const now = sim.world.clock.now();
      for (const e of this.pending) {
        if (e.node !== name || e.edge.mirror !== t.key.mirror || e.topicId !== t.key.topicId) continue;
        if (now > e.deadline || e.reached.has(t.key.partition)) continue;
        if (e.targets.includes(t.record.state)) e.reached.set(t.key.partition, now);
      }
    });
  }

  /** Whether the edge's copy of a partition holds (high watermark) what its source held at `end`. */
  private copied(edge: MirrorEdge, topic: string, partition: number, end: bigint): boolean {
    const copy = leaderLog(this.sim.node(edge.to).cluster, topic, partition)?.highWatermark;
    const source = leaderLog(this.sim.node(edge.from).cluster, topic, partition)?.highWatermark;
    // A source cut below `end` since (an unclean election, a failback onto it) is followed down.
    const target = source !== undefined && source < end ? source : end;
    return copy !== undefined && copy >= target;
  }

  /** A high watermark moved on `node` (see `GuardHooks.afterHighWatermarkMove`). */
  onHighWatermark(node: string, topic: string, partition: number): void {
    const now = this.sim.world.clock.now();
    for (const e of this.pending) {
      if (!e.catchUp || e.node !== node || e.topic !== topic || now > e.deadline) continue;
      const end = e.sourceEnds.get(partition);
      if (end === undefined || e.caught.has(partition)) continue;
      if (this.copied(e.edge, topic, partition, end)) e.caught.set(partition, now);
    }
  }

  /** A link changed (cut, healed, slowed, configs refused): expectations that need it are dropped. */
  linkChanged(from: string, to: string, why: string): void {
    for (const e of this.pending) {
      if (e.needsSource && e.edge.from === from && e.edge.to === to) this.drop(e, why);
    }
  }

  /**
   * Registers an expectation right after its command returned; nothing when the clusters it needs are not
   * healthy now (or the link is cut).
   */
  expect(request: LivenessRequest): void {
    const sim = this.sim;
    const { edge, topic } = request;
    const dest = sim.node(edge.to);
    if (!clusterHealthy(dest.cluster, sim.brokers)) return;
    let slowest = slowestDisk(dest.cluster, sim.brokers);
    if (request.needsSource) {
      const source = sim.node(edge.from).cluster;
      const link = sim.world.link(edge.from, edge.to);
      if (!clusterHealthy(source, sim.brokers) || link.isCut || link.refusesConfigs) return;
      slowest = Math.max(slowest, slowestDisk(source, sim.brokers));
    }
    const meta = dest.cluster.controller.image.topic(topic);
    if (!meta) return;
    // A copy of a source topic deleted (maybe created again) since: it can only fail.
    if (
      request.needsSource &&
      sim.node(edge.from).cluster.controller.image.topic(topic)?.topicId !== meta.topicId
    )
      return;
    const views = new Map(
      dest.mirroring.coordinators
        .describe(edge.mirror)
        .filter((v) => v.key.topicId === meta.topicId)
        .map((v) => [v.key.partition, v]),
    );
    const now = sim.world.clock.now();
    const reached = new Map<number, number>();
    const partitions: number[] = [];
    const sourceEnds = new Map<number, bigint>();
    const caught = new Map<number, number>();
    for (const p of meta.partitions) {
      const view = views.get(p.partition);
      if (view && request.exclude?.(view) !== undefined) continue;
      partitions.push(p.partition);
      if (view && request.targets.includes(view.state)) reached.set(p.partition, now);
      if (request.catchUp) {
        const end = leaderLog(sim.node(edge.from).cluster, topic, p.partition)?.highWatermark ?? 0n;
        sourceEnds.set(p.partition, end);
        if (this.copied(edge, topic, p.partition, end)) caught.set(p.partition, now);
      }
    }
    if (partitions.length === 0) return;
    this.pending.push({
      sourceEnds,
      caught,
      ...request,
      node: edge.to,
      topicId: meta.topicId,
      mirrorName: meta.configs.get("mirror.name"),
      partitions,
      registeredAt: now,
      deadline: now + LIVENESS_BOUND_MS + 4 * slowest,
      reached,
    });
  }

  /** Decides every expectation whose deadline has passed (after each command). */
  check(): void {
    const now = this.sim.world.clock.now();
    const due = this.pending.filter((e) => e.deadline <= now);
    if (due.length === 0) return;
    this.pending = this.pending.filter((e) => e.deadline > now);
    for (const e of due) this.decide(e);
  }

  /**
   * Decides every pending expectation, due or not (the settle calls it once its first 35 s passed, more
   * than any deadline: the settle's heals change nothing on clusters that were healthy).
   */
  finish(): void {
    const due = this.pending;
    this.pending = [];
    for (const e of due) this.decide(e);
  }

  private decide(e: Expectation): void {
    if (e.dropped !== undefined) {
      count(e.invariant, "dropped", e.dropped);
      return;
    }
    const late = (at: number | undefined) => at === undefined || at > e.deadline;
    const missing = e.partitions.filter((p) => {
      if (late(e.reached.get(p))) return true;
      if (!e.catchUp || !late(e.caught.get(p))) return false;
      // Caught up without a move of its own high watermark: the source's fell to it (cut since).
      const end = e.sourceEnds.get(p) ?? 0n;
      const source = leaderLog(this.sim.node(e.edge.from).cluster, e.topic, p)?.highWatermark;
      return !(source !== undefined && source < end && this.copied(e.edge, e.topic, p, end));
    });
    if (missing.length === 0) {
      count(e.invariant, "held");
      return;
    }
    // A partition that failed for good (non-retryable: the source topic deleted, a divergence the mirror
    // may not follow) waits for the operator: the safety checks' business, not a slow command.
    const views = this.sim
      .node(e.node)
      .mirroring.coordinators.describe(e.edge.mirror)
      .filter((v) => v.key.topicId === e.topicId);
    const forGood = (p: number) =>
      views.some(
        (v) => v.key.partition === p && v.state === "FAILED" && v.retryAttempt === NON_RETRYABLE_ATTEMPT,
      );
    if (missing.every(forGood)) {
      count(e.invariant, "dropped", "failed for good");
      return;
    }
    const states = missing.map((p) => {
      const v = views.find((x) => x.key.partition === p);
      const copy = leaderLog(this.sim.node(e.node).cluster, e.topic, p)?.highWatermark;
      const behind = late(e.reached.get(p))
        ? ""
        : `, its copy's high watermark ${copy} short of the source's ${e.sourceEnds.get(p)} when the command returned`;
      return `${p} (now ${v?.state ?? "no state"}${v?.errorMessage ? `: ${v.errorMessage}, attempt ${v.retryAttempt}` : ""}${behind})`;
    });
    count(e.invariant, "failed");
    this.sim.report([
      {
        invariant: e.invariant,
        message: `${e.node} ${e.what}: partition(s) ${states.join(", ")} not ${e.targets.join("/")}${e.catchUp ? " and caught up" : ""} within ${e.deadline - e.registeredAt} ms after the command returned (t+${e.registeredAt - 1_700_000_000_000}ms), on clusters healthy all along`,
      },
    ]);
  }

  /**
   * Watches `node` for faults from now on (for a check outside the expectations, such as a restart's
   * STOPPING): `disturbed()` says why the first one came, or undefined while none did.
   */
  watchFaults(node: string): { disturbed(): string | undefined; stop(): void } {
    const watcher = { node, why: undefined as string | undefined };
    this.faultWatchers.add(watcher);
    return { disturbed: () => watcher.why, stop: () => this.faultWatchers.delete(watcher) };
  }

  /** Something went wrong with `node` (a fault): expectations on it, or needing it as a source, are dropped. */
  disturb(node: string, why: string): void {
    for (const w of this.faultWatchers) if (w.node === node && w.why === undefined) w.why = why;
    for (const e of this.pending) {
      if (e.node === node || (e.needsSource && e.edge.from === node)) this.drop(e, why);
    }
  }

  private supersede(node: string, topic: string, value: string | undefined): void {
    for (const e of this.pending) {
      if (e.node === node && e.topic === topic && value !== e.mirrorName) {
        this.drop(e, `mirror.name changed to ${value ?? "unset"}`);
      }
    }
  }

  private drop(e: Expectation, why: string): void {
    if (e.dropped !== undefined || this.sim.world.clock.now() > e.deadline) return;
    // Every partition got there before the fault: the command kept its promise.
    if (e.partitions.every((p) => e.reached.has(p) && (!e.catchUp || e.caught.has(p)))) return;
    e.dropped = why;
  }
}

/**
 * Registers the expectation of what `topic`'s `mirror.name` on the edge's destination asks for now: STOPPED
 * when removed (`failover-ends`), PAUSED when paused (`pause-ends`), MIRRORING when active (`add-mirrors`,
 * needing the source). Partitions FAILED now are left out of a pause or an add: FAILED is left to the
 * partition's own retries (see `commandFor`).
 */
export function expectRequested(sim: Simulation, edge: MirrorEdge, topic: string, what: string): void {
  const state = sim.syncEdgeState(edge, topic);
  const failed = (v: { state: string }) => (v.state === "FAILED" ? "FAILED" : undefined);
  if (state === "REMOVED") {
    sim.liveness.expect({
      invariant: "failover-ends",
      what,
      edge,
      topic,
      targets: ["STOPPED"],
      needsSource: false,
    });
  } else if (state === "PAUSED") {
    sim.liveness.expect({
      invariant: "pause-ends",
      what,
      edge,
      topic,
      targets: ["PAUSED"],
      needsSource: false,
      exclude: failed,
    });
  } else if (state === "ACTIVE") {
    sim.liveness.expect({
      invariant: "add-mirrors",
      what,
      edge,
      topic,
      targets: MIRRORING_STATES,
      needsSource: true,
      catchUp: true,
      exclude: failed,
    });
  }
}
