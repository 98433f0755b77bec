import { KafkaCluster } from "@cluster-mirror/cluster";
import { describe, expect, it, vi } from "vitest";
import {
  abandonedDeadline,
  activePassive,
  checkAbandonedTxns,
  formatViolations,
  groupCommit,
  leaderLog,
  produce,
  restartNode,
  Simulation,
  settleAndCheck,
  slowDisk,
  transactionOutcome,
  txnBegin,
  txnCommitCrash,
  txnCommitKill,
} from "../src/index";

describe("a whole-node restart (kill -9, then a new process on the same disks)", () => {
  it("replaces the node's process: the same cluster id, logs and group offsets, the old process closed", async () => {
    const sim = await Simulation.create(activePassive(), 11);
    await produce(sim, 0, 0, 3);
    groupCommit(sim, 0, 0, 1);
    const before = sim.node("a");
    const end = leaderLog(before.cluster, "orders", 0)!.logEndOffset;
    const offsets = before.cluster.groups.fetchOffsets("g0");
    await restartNode(sim, 0);
    const after = sim.node("a");
    expect(after.cluster).not.toBe(before.cluster);
    expect(before.cluster.isClosed).toBe(true);
    expect(before.cluster.runningBrokers()).toEqual([]);
    expect(after.cluster.clusterId).toBe(before.cluster.clusterId);
    expect(sim.world.registry.lookup("a:9092")).toBe(after.cluster);
    expect(leaderLog(after.cluster, "orders", 0)!.logEndOffset).toBe(end);
    expect(after.cluster.groups.fetchOffsets("g0")).toEqual(offsets);
    // The mirror on b reaches the new process through its link, and the workload's producer connects again.
    await produce(sim, 0, 0, 2);
    await settleAndCheck(sim);
    expect(formatViolations(sim.violations), sim.steps.join("\n")).toBe("");
    expect(sim.world.tasksAfterKill).toEqual([]);
  });

  it("runs nothing the killed process queued, and reports a task it schedules after the kill", async () => {
    const sim = await Simulation.create(activePassive(), 15);
    const old = sim.node("b").cluster;
    let ran = 0;
    old.scheduler.schedule(() => ran++, 10);
    await restartNode(sim, 1);
    await sim.world.time.advance(100);
    expect([ran, sim.world.tasksAfterKill]).toEqual([0, []]);
    old.scheduler.schedule(() => ran++, 10);
    await sim.world.time.advance(100);
    expect([ran, sim.world.tasksAfterKill]).toEqual([0, ["b"]]);
  });

  it("aborts, at its timeout, a transaction whose producer died with the node, and never counts it committed", async () => {
    const sim = await Simulation.create(activePassive(), 12);
    await txnBegin(sim, 0, 0);
    const open = sim.openTxn!;
    await restartNode(sim, 0);
    expect(sim.openTxn).toBeUndefined();
    const [abandoned] = sim.model.abandonedTxns;
    expect(abandoned).toMatchObject({ node: open.node, topic: open.topic, offset: open.offset });
    const outcome = () =>
      transactionOutcome(
        sim.node(open.node).cluster,
        open.topic,
        open.partition,
        abandoned!.producerId,
        open.offset,
      );
    // Still open until its timeout: the new coordinator loaded it from the stored transaction state.
    await sim.world.time.advance(30_000);
    expect(outcome()).toBe("OPEN");
    expect(await checkAbandonedTxns(sim)).toEqual([]);
    expect(sim.world.clock.now()).toBeGreaterThanOrEqual(abandonedDeadline(abandoned!));
    expect(outcome()).toBe("ABORTED");
    expect(sim.model.commits).toEqual([]);
    await settleAndCheck(sim);
    expect(formatViolations(sim.violations), sim.steps.join("\n")).toBe("");
  });

  it("reports an abandoned transaction still open past its deadline (a restarted coordinator that forgot it)", async () => {
    const sim = await Simulation.create(activePassive(), 13);
    await txnBegin(sim, 0, 0);
    // The new process loads no transaction state: nobody aborts the transaction, its LSO stays behind it.
    const load = vi.spyOn(KafkaCluster.prototype, "loadTransactionState").mockImplementation(() => {});
    try {
      await restartNode(sim, 0);
    } finally {
      load.mockRestore();
    }
    expect((await checkAbandonedTxns(sim)).map((v) => v.message)).toEqual([
      expect.stringContaining("still reads as open"),
    ]);
  });

  it.each([
    [0, "as its coordinator stored the commit decision"],
    [1, "after the COMMIT marker"],
  ])(
    "finishes a commit its node was killed inside (when %i), and counts it committed",
    async (when, step) => {
      const sim = await Simulation.create(activePassive(), 14);
      await txnCommitKill(sim, 0, 0, when, 0);
      expect(sim.steps.some((s) => s.includes(step))).toBe(true);
      expect(sim.stats.nodeRestarts).toBe(1);
      expect(sim.model.commits).toHaveLength(1);
      await settleAndCheck(sim);
      const c = sim.model.commits[0]!;
      for (const node of ["a", "b"])
        expect(transactionOutcome(sim.node(node).cluster, c.topic, c.partition, c.producerId, c.offset)).toBe(
          "COMMITTED",
        );
      expect(formatViolations(sim.violations), sim.steps.join("\n")).toBe("");
    },
  );

  it("reports a commit decided before the kill that the new process does not finish", async () => {
    const sim = await Simulation.create(activePassive(), 14);
    const load = vi.spyOn(KafkaCluster.prototype, "loadTransactionState").mockImplementation(() => {});
    try {
      await txnCommitKill(sim, 0, 0, 0, 0);
    } finally {
      load.mockRestore();
    }
    await settleAndCheck(sim);
    expect(sim.violations.map((v) => v.invariant)).toContain("txn-marker-timely");
  });

  it("keeps the workload's clients, which are not the node's process, waiting across a kill", async () => {
    // The kill lands 4 ms after the commit, inside the next command's txnBegin (a slow disk delays its
    // acknowledgement): its producer's retry backoff, scheduled after the kill, must still run.
    const sim = await Simulation.create(activePassive(), 6);
    await txnCommitKill(sim, 54, 292, 1, 4);
    slowDisk(sim, 310, 515, 1760);
    await txnCommitCrash(sim, 646, 619, 1, 0, 1514);
    expect(sim.steps.some((s) => s.includes("did not happen"))).toBe(false);
    await settleAndCheck(sim);
    expect(formatViolations(sim.violations), sim.steps.join("\n")).toBe("");
  });
});
