import { describe, expect, it } from "vitest";
import {
  ClusterError,
  ManualClock,
  ManualScheduler,
  type TopicPartition,
  TransactionCoordinator,
  type TransactionMetadata,
} from "../src/index";

interface Marker {
  partition: TopicPartition;
  producerId: bigint;
  producerEpoch: number;
  result: "COMMIT" | "ABORT";
}

function setup(persist?: (transactions: TransactionMetadata[]) => void) {
  const clock = new ManualClock(0);
  const markers: Marker[] = [];
  const down = new Set<string>();
  let nextId = 1000n;
  const tc = new TransactionCoordinator({
    clock,
    nextProducerId: () => nextId++,
    writeTxnMarker: (m) => {
      if (down.has(`${m.partition.topic}-${m.partition.partition}`)) throw new Error("leader not available");
      markers.push(m);
    },
    ...(persist && { persist }),
  });
  return { clock, markers, down, tc };
}

const tp = (topic: string, partition = 0): TopicPartition => ({ topic, partition });

function errorName(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ClusterError) return e.errorName;
    throw e;
  }
  return "none";
}

describe("TransactionCoordinator", () => {
  it("gives idempotent producers fresh ids and transactional ids the same id at higher epochs", () => {
    const { tc } = setup();
    expect(tc.initProducerId({})).toEqual({ producerId: 1000n, producerEpoch: 0 });
    expect(tc.initProducerId({})).toEqual({ producerId: 1001n, producerEpoch: 0 });
    expect(tc.initProducerId({ transactionalId: "tx" })).toEqual({ producerId: 1002n, producerEpoch: 0 });
    expect(tc.initProducerId({ transactionalId: "tx" })).toEqual({ producerId: 1002n, producerEpoch: 1 });
  });

  it("commits with a COMMIT marker on every partition of the transaction", () => {
    const { tc, markers } = setup();
    const { producerId, producerEpoch } = tc.initProducerId({ transactionalId: "tx" });
    tc.addPartitionsToTxn({
      transactionalId: "tx",
      producerId,
      producerEpoch,
      partitions: [tp("a"), tp("b", 1)],
    });
    tc.addPartitionsToTxn({ transactionalId: "tx", producerId, producerEpoch, partitions: [tp("a")] });
    expect(tc.isInTransaction("tx", tp("b", 1))).toBe(true);
    tc.endTxn({ transactionalId: "tx", producerId, producerEpoch, commit: true });
    expect(markers.map((m) => [m.partition.topic, m.result])).toEqual([
      ["a", "COMMIT"],
      ["b", "COMMIT"],
    ]);
    expect(tc.describeTransaction("tx")?.state).toBe("CompleteCommit");
    // A retried EndTxn after success is answered with success, and writes nothing more.
    tc.endTxn({ transactionalId: "tx", producerId, producerEpoch, commit: true });
    expect(markers).toHaveLength(2);
    // Aborting a transaction that committed is a state error, as in Kafka.
    expect(
      errorName(() => tc.endTxn({ transactionalId: "tx", producerId, producerEpoch, commit: false })),
    ).toBe("INVALID_TXN_STATE");
  });

  it("fences a zombie: a new initProducerId aborts the open transaction and old epochs are refused", () => {
    const { tc, markers } = setup();
    const old = tc.initProducerId({ transactionalId: "tx" });
    tc.addPartitionsToTxn({ transactionalId: "tx", ...old, partitions: [tp("a")] });
    const fresh = tc.initProducerId({ transactionalId: "tx" });
    expect(fresh.producerId).toBe(old.producerId);
    expect(fresh.producerEpoch).toBe(old.producerEpoch + 2);
    expect(markers).toEqual([
      expect.objectContaining({ result: "ABORT", producerEpoch: old.producerEpoch + 1, partition: tp("a") }),
    ]);
    expect(errorName(() => tc.endTxn({ transactionalId: "tx", ...old, commit: true }))).toBe(
      "PRODUCER_FENCED",
    );
    expect(
      errorName(() =>
        tc.addPartitionsToTxn({
          transactionalId: "tx",
          producerId: 1n,
          producerEpoch: 0,
          partitions: [tp("a")],
        }),
      ),
    ).toBe("INVALID_PRODUCER_ID_MAPPING");
  });

  it("writes the fencing ABORT for the transaction's own producer id even when its epochs run out", () => {
    const { tc, markers } = setup();
    let pid = tc.initProducerId({ transactionalId: "tx" });
    while (pid.producerEpoch < 32766) pid = tc.initProducerId({ transactionalId: "tx" });
    expect(pid).toEqual({ producerId: 1000n, producerEpoch: 32766 });
    tc.addPartitionsToTxn({ transactionalId: "tx", ...pid, partitions: [tp("a")] });
    const fresh = tc.initProducerId({ transactionalId: "tx" });
    // The open transaction's batches carry producer id 1000: only a marker for 1000 closes it.
    expect(markers).toEqual([
      expect.objectContaining({
        result: "ABORT",
        producerId: 1000n,
        producerEpoch: 32767,
        partition: tp("a"),
      }),
    ]);
    expect(fresh).toEqual({ producerId: 1001n, producerEpoch: 0 });
  });

  it("verifies a transactional produce: the current producer epoch, and a partition of its transaction", () => {
    const { tc } = setup();
    const old = tc.initProducerId({ transactionalId: "tx" });
    tc.addPartitionsToTxn({ transactionalId: "tx", ...old, partitions: [tp("a")] });
    const fresh = tc.initProducerId({ transactionalId: "tx" });
    tc.addPartitionsToTxn({ transactionalId: "tx", ...fresh, partitions: [tp("b")] });
    const verify = (p: { producerId: bigint; producerEpoch: number }, partition: TopicPartition) =>
      errorName(() => tc.verifyTransaction({ transactionalId: "tx", ...p, partition }));
    expect(verify(fresh, tp("b"))).toBe("none");
    // The fenced producer may not write into the new producer's transaction.
    expect(verify(old, tp("b"))).toBe("INVALID_PRODUCER_EPOCH");
    expect(verify(fresh, tp("a"))).toBe("INVALID_TXN_STATE");
    expect(verify({ producerId: 1n, producerEpoch: 0 }, tp("b"))).toBe("INVALID_PRODUCER_ID_MAPPING");
  });

  it("aborts transactions past their timeout and fences their producer", () => {
    const { tc, clock, markers } = setup();
    const p = tc.initProducerId({ transactionalId: "slow", transactionTimeoutMs: 1000 });
    tc.addPartitionsToTxn({ transactionalId: "slow", ...p, partitions: [tp("a")] });
    clock.advance(999);
    expect(tc.abortTimedOutTransactions()).toEqual([]);
    clock.advance(1);
    expect(tc.abortTimedOutTransactions()).toEqual(["slow"]);
    expect(markers.at(-1)).toMatchObject({ result: "ABORT" });
    expect(errorName(() => tc.endTxn({ transactionalId: "slow", ...p, commit: true }))).toBe(
      "PRODUCER_FENCED",
    );
  });

  it("keeps markers pending while a leader is down and answers CONCURRENT_TRANSACTIONS until they land", () => {
    const { tc, down, markers } = setup();
    const p = tc.initProducerId({ transactionalId: "tx" });
    tc.addPartitionsToTxn({ transactionalId: "tx", ...p, partitions: [tp("a"), tp("b")] });
    down.add("b-0");
    tc.endTxn({ transactionalId: "tx", ...p, commit: true });
    expect(tc.describeTransaction("tx")).toMatchObject({ state: "PrepareCommit", pendingMarkers: [tp("b")] });
    expect(
      errorName(() => tc.addPartitionsToTxn({ transactionalId: "tx", ...p, partitions: [tp("a")] })),
    ).toBe("CONCURRENT_TRANSACTIONS");
    down.clear();
    tc.addPartitionsToTxn({ transactionalId: "tx", ...p, partitions: [tp("c")] });
    expect(markers.map((m) => m.partition.topic)).toEqual(["a", "b"]);
    expect(tc.describeTransaction("tx")).toMatchObject({ state: "Ongoing", partitions: [tp("c")] });
  });

  it("writes a failed marker again every 100 ms on its scheduler, until the marker lands or it closes", async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    let attempts = 0;
    let leaderUp = false;
    const tc = new TransactionCoordinator({
      clock,
      scheduler,
      nextProducerId: () => 7n,
      writeTxnMarker: () => {
        attempts++;
        if (!leaderUp) throw new Error("leader not available");
      },
    });
    const p = tc.initProducerId({ transactionalId: "tx" });
    tc.addPartitionsToTxn({ transactionalId: "tx", ...p, partitions: [tp("a")] });
    await tc.endTxn({ transactionalId: "tx", ...p, commit: true });
    expect(tc.describeTransaction("tx")?.state).toBe("PrepareCommit");
    scheduler.run(99);
    expect(attempts).toBe(1);
    scheduler.run(1);
    expect(attempts).toBe(2);
    leaderUp = true;
    scheduler.run(100);
    expect(attempts).toBe(3);
    expect(tc.describeTransaction("tx")?.state).toBe("CompleteCommit");
    expect(scheduler.pending).toBe(0);
    // A coordinator closed while a marker is failing stops retrying: nothing keeps a process alive.
    leaderUp = false;
    tc.addPartitionsToTxn({ transactionalId: "tx", ...p, partitions: [tp("a")] });
    await tc.endTxn({ transactionalId: "tx", ...p, commit: false });
    expect(scheduler.pending).toBe(1);
    tc.close();
    expect(scheduler.pending).toBe(0);
    scheduler.run(1000);
    expect(attempts).toBe(4);
  });

  it("refuses bad timeouts and empty ids with typed errors", () => {
    const { tc } = setup();
    expect(errorName(() => tc.initProducerId({ transactionalId: "t", transactionTimeoutMs: 0 }))).toBe(
      "INVALID_TRANSACTION_TIMEOUT",
    );
    expect(errorName(() => tc.initProducerId({ transactionalId: "t", transactionTimeoutMs: 900_001 }))).toBe(
      "INVALID_TRANSACTION_TIMEOUT",
    );
    expect(errorName(() => tc.initProducerId({ transactionalId: "" }))).toBe("INVALID_REQUEST");
  });
});

describe("coordinator housekeeping on the cluster's scheduler", () => {
  it("aborts a transaction past its timeout without anyone calling abortTimedOutTransactions", async () => {
    const { testCluster } = await import("./helpers");
    const { cluster, settle } = testCluster({ transactionAbortIntervalMs: 1000 });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    const p = cluster.transactions.initProducerId({ transactionalId: "slow", transactionTimeoutMs: 5000 });
    cluster.transactions.addPartitionsToTxn({
      transactionalId: "slow",
      ...p,
      partitions: [{ topic: "t", partition: 0 }],
    });
    settle(4000);
    expect(cluster.transactions.describeTransaction("slow")?.state).toBe("Ongoing");
    settle(2000);
    // The abort's marker counts once the in-sync replicas have it (their fetches ran in the settle); its
    // acknowledgement is a promise continuation.
    await new Promise((resolve) => setImmediate(resolve));
    expect(cluster.transactions.describeTransaction("slow")?.state).toBe("CompleteAbort");
    cluster.close();
  });

  it("stores each change before answering, and the commit decision before its first marker", () => {
    let stored: TransactionMetadata[] = [];
    const { tc, markers } = setup((transactions) => {
      stored = transactions;
    });
    const pid = tc.initProducerId({ transactionalId: "tx" });
    expect(stored).toEqual([expect.objectContaining({ transactionalId: "tx", ...pid, state: "Empty" })]);
    tc.addPartitionsToTxn({ transactionalId: "tx", ...pid, partitions: [tp("a")] });
    expect(stored[0]).toMatchObject({ state: "Ongoing", partitions: [tp("a")] });
    const atMarker: string[] = [];
    const seen = markers.push.bind(markers);
    markers.push = (...m: Marker[]) => {
      atMarker.push(stored[0]!.state);
      return seen(...m);
    };
    tc.endTxn({ transactionalId: "tx", ...pid, commit: true });
    expect(atMarker).toEqual(["PrepareCommit"]);
    expect(stored[0]).toMatchObject({ state: "CompleteCommit", partitions: [] });
  });

  it("a change that cannot be stored is undone and refused as retriable; the next one goes through", () => {
    let failing = true;
    let stored: TransactionMetadata[] = [];
    const { tc, markers } = setup((transactions) => {
      if (failing) throw new Error("ENOSPC: no space left on device");
      stored = transactions;
    });
    const error = (() => {
      try {
        tc.initProducerId({ transactionalId: "tx" });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ClusterError);
    expect(error).toMatchObject({ errorName: "COORDINATOR_NOT_AVAILABLE", retriable: true });
    expect((error as Error).message).toMatch(/could not be stored \(ENOSPC.*nothing changed/);
    expect(tc.listTransactions()).toEqual([]);
    failing = false;
    const pid = tc.initProducerId({ transactionalId: "tx" });
    tc.addPartitionsToTxn({ transactionalId: "tx", ...pid, partitions: [tp("a")] });
    failing = true;
    // A commit that cannot be stored writes no marker and leaves the transaction open, as it was.
    expect(errorName(() => tc.endTxn({ transactionalId: "tx", ...pid, commit: true }))).toBe(
      "COORDINATOR_NOT_AVAILABLE",
    );
    expect(markers).toEqual([]);
    expect(tc.describeTransaction("tx")).toMatchObject({ state: "Ongoing", pendingMarkers: [] });
    failing = false;
    tc.endTxn({ transactionalId: "tx", ...pid, commit: true });
    expect(markers.map((m) => m.result)).toEqual(["COMMIT"]);
    expect(stored[0]?.state).toBe("CompleteCommit");
  });

  it("loads a stored state: a decided transaction's markers are written again, an ongoing one aborts at its timeout", () => {
    const first = setup();
    const a = first.tc.initProducerId({ transactionalId: "decided" });
    first.tc.addPartitionsToTxn({ transactionalId: "decided", ...a, partitions: [tp("a")] });
    first.down.add("a-0");
    first.tc.endTxn({ transactionalId: "decided", ...a, commit: true });
    const b = first.tc.initProducerId({ transactionalId: "open", transactionTimeoutMs: 5000 });
    first.tc.addPartitionsToTxn({ transactionalId: "open", ...b, partitions: [tp("b")] });
    const stored = first.tc.listTransactions();

    const second = setup();
    second.tc.load(stored);
    expect(second.tc.isInTransaction("open", tp("b"))).toBe(true);
    second.tc.abortTimedOutTransactions();
    expect(second.markers.map((m) => [m.partition.topic, m.result])).toEqual([["a", "COMMIT"]]);
    second.clock.advance(5000);
    second.tc.abortTimedOutTransactions();
    expect(second.markers.map((m) => [m.partition.topic, m.result])).toEqual([
      ["a", "COMMIT"],
      ["b", "ABORT"],
    ]);
    expect(second.tc.describeTransaction("decided")?.state).toBe("CompleteCommit");
    expect(second.tc.describeTransaction("open")?.state).toBe("CompleteAbort");
  });

  it("forgets a transactional id idle for transactional.id.expiration.ms, never one with a transaction in progress", () => {
    const stored: TransactionMetadata[][] = [];
    const clock = new ManualClock(0);
    let nextId = 1000n;
    const tc = new TransactionCoordinator({
      clock,
      nextProducerId: () => nextId++,
      writeTxnMarker: () => {},
      transactionalIdExpirationMs: 60_000,
      persist: (t) => stored.push(t),
    });
    const done = tc.initProducerId({ transactionalId: "done" });
    tc.addPartitionsToTxn({ transactionalId: "done", ...done, partitions: [tp("a")] });
    tc.endTxn({ transactionalId: "done", ...done, commit: true });
    const open = tc.initProducerId({ transactionalId: "open", transactionTimeoutMs: 900_000 });
    tc.addPartitionsToTxn({ transactionalId: "open", ...open, partitions: [tp("b")] });
    clock.advance(59_999);
    expect(tc.expireTransactionalIds()).toEqual([]);
    clock.advance(1);
    expect(tc.expireTransactionalIds()).toEqual(["done"]);
    // Stored without it; the ongoing transaction (older than the expiration, younger than its timeout) stays.
    expect(stored.at(-1)?.map((t) => t.transactionalId)).toEqual(["open"]);
    expect(tc.isInTransaction("open", tp("b"))).toBe(true);
    // The expired id starts over with a new producer id; its old producer is no longer known.
    expect(tc.initProducerId({ transactionalId: "done" })).toEqual({ producerId: 1002n, producerEpoch: 0 });
    expect(errorName(() => tc.endTxn({ transactionalId: "done", ...done, commit: true }))).toBe(
      "INVALID_PRODUCER_ID_MAPPING",
    );
    // An id whose state changed since is not expired: each change counts as its last update.
    clock.advance(59_999);
    tc.abortTimedOutTransactions();
    expect(tc.expireTransactionalIds()).toEqual([]);
  });
});
