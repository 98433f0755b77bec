import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  FETCH_SESSION_ID_NOT_FOUND,
  FetchSessionHandler,
  INVALID_FETCH_SESSION_EPOCH,
  type SessionAnswer,
  type SessionFetch,
  type SessionPartition,
} from "../src/fetch-session";

const at = (partition: number, fetchOffset: bigint, topic = "t"): SessionPartition => ({
  topic,
  partition,
  fetchOffset,
  lastFetchedEpoch: 0,
  currentLeaderEpoch: 0,
  maxBytes: 1000,
});

const answer = (
  sessionId: number,
  partitions: number[],
  highWatermark = 10n,
  errorCode = 0,
): SessionAnswer => ({
  errorCode,
  sessionId,
  partitions: partitions.map((partition) => ({
    topic: "t",
    partition,
    highWatermark,
    lastStableOffset: highWatermark,
    logStartOffset: 0n,
  })),
});

const named = (fetch: SessionFetch) => fetch.partitions.map((p) => `${p.partition}@${p.fetchOffset}`);

describe("a fetch session (KIP-227), client side", () => {
  it("opens with a full fetch, then names only added and moved partitions, and the dropped ones as forgotten", () => {
    const session = new FetchSessionHandler();
    const first = session.build([at(0, 0n), at(1, 0n), at(2, 0n)]);
    expect(first).toMatchObject({ sessionId: 0, epoch: 0, incremental: false });
    expect(named(first)).toEqual(["0@0", "1@0", "2@0"]);
    expect(session.accept(first, answer(41, [0, 1, 2]))).toBe(true);
    expect(session.state).toEqual({ sessionId: 41, epoch: 1, partitions: 3 });

    const idle = session.build([at(0, 0n), at(1, 0n), at(2, 0n)]);
    expect(idle).toMatchObject({ sessionId: 41, epoch: 1, incremental: true, partitions: [], forgotten: [] });
    session.accept(idle, answer(41, []));

    const moved = session.build([at(0, 5n), at(1, 0n), at(3, 0n)]);
    expect(moved).toMatchObject({ sessionId: 41, epoch: 2, incremental: true });
    expect(named(moved)).toEqual(["0@5", "3@0"]);
    expect(moved.forgotten).toEqual([{ topic: "t", partition: 2 }]);
    session.accept(moved, answer(41, [0, 3], 12n));
    expect(session.state).toEqual({ sessionId: 41, epoch: 3, partitions: 3 });
    // What an incremental answer leaves out: the offsets the session last reported; forgotten ones are gone.
    expect(session.unchanged("t", 1)).toEqual({
      highWatermark: 10n,
      lastStableOffset: 10n,
      logStartOffset: 0n,
    });
    expect(session.unchanged("t", 0)?.highWatermark).toBe(12n);
    expect(session.unchanged("t", 2)).toBeUndefined();
  });

  it("sessions by topic id: forgotten partitions carry their id; a partition wanted under another id starts a new session", () => {
    const session = new FetchSessionHandler();
    const withId = (partition: number, topicId: string) => ({ ...at(partition, 0n), topicId });
    const first = session.build([withId(0, "id-1"), withId(1, "id-1")]);
    session.accept(first, answer(5, [0, 1]));
    const dropped = session.build([withId(0, "id-1")]);
    expect(dropped.forgotten).toEqual([{ topic: "t", partition: 1, topicId: "id-1" }]);
    session.accept(dropped, answer(5, []));
    // The topic was replaced (same name, new id): the broker holds partition 0 under the old id, so a
    // full fetch (epoch 0, naming the old session so the broker frees it) opens a new session.
    const replaced = session.build([withId(0, "id-2")]);
    expect(replaced).toMatchObject({ sessionId: 5, epoch: 0, incremental: false, forgotten: [] });
    expect(replaced.partitions).toEqual([withId(0, "id-2")]);
  });

  it("FETCH_SESSION_TOPIC_ID_ERROR (106) is a session error: the fetch is sent again, full", () => {
    const session = new FetchSessionHandler();
    const first = session.build([at(0, 0n)]);
    session.accept(first, answer(8, [0]));
    const next = session.build([at(0, 1n)]);
    expect(session.accept(next, answer(0, [], 10n, 106))).toBe(false);
    expect(session.build([at(0, 1n)])).toMatchObject({ sessionId: 8, epoch: 0, incremental: false });
  });

  it("a change of epoch or size puts a partition in the request as a change of offset does", () => {
    const session = new FetchSessionHandler();
    const first = session.build([at(0, 0n), at(1, 0n), at(2, 0n)]);
    session.accept(first, answer(7, [0, 1, 2]));
    const next = session.build([
      { ...at(0, 0n), lastFetchedEpoch: 1 },
      { ...at(1, 0n), currentLeaderEpoch: 2 },
      { ...at(2, 0n), maxBytes: 5 },
    ]);
    expect(named(next)).toEqual(["0@0", "1@0", "2@0"]);
  });

  // After 70 the broker has no session of that id (it may be another client's after a restart): the full
  // fetch names none. After 71 the broker still holds it: the full fetch names it, so the broker frees it.
  for (const [code, sessionId] of [
    [FETCH_SESSION_ID_NOT_FOUND, 0],
    [INVALID_FETCH_SESSION_EPOCH, 9],
  ] as const) {
    it(`after session error ${code} the fetch may go again, full, naming session ${sessionId}`, () => {
      const session = new FetchSessionHandler();
      session.accept(session.build([at(0, 0n)]), answer(9, [0]));
      const incremental = session.build([at(0, 3n)]);
      expect(session.accept(incremental, answer(0, [], 0n, code))).toBe(false);
      const again = session.build([at(0, 3n)]);
      expect(again).toMatchObject({ sessionId, epoch: 0, incremental: false });
      expect(named(again)).toEqual(["0@3"]);
      expect(session.unchanged("t", 0)).toBeUndefined();
    });
  }

  it("any other request-level error or a failed request closes the session without asking to resend", () => {
    const session = new FetchSessionHandler();
    session.accept(session.build([at(0, 0n)]), answer(9, [0]));
    expect(session.accept(session.build([at(0, 1n)]), answer(0, [], 0n, 58))).toBe(true);
    expect(session.build([at(0, 1n)])).toMatchObject({ sessionId: 9, epoch: 0 });
    const session2 = new FetchSessionHandler();
    session2.accept(session2.build([at(0, 0n)]), answer(9, [0]));
    session2.failed(session2.build([at(0, 1n)]));
    expect(session2.build([at(0, 1n)])).toMatchObject({ sessionId: 9, epoch: 0, incremental: false });
  });

  it("a fetch built while another is in flight goes without the session and leaves it as it was", () => {
    const session = new FetchSessionHandler();
    session.accept(session.build([at(0, 0n)]), answer(9, [0]));
    const inFlight = session.build([at(0, 2n)]);
    const aside = session.build([at(0, 4n)]);
    expect(aside).toMatchObject({ sessionId: 0, epoch: -1, incremental: false });
    expect(named(aside)).toEqual(["0@4"]);
    session.accept(aside, answer(0, [0], 99n));
    expect(session.unchanged("t", 0)?.highWatermark).toBe(10n);
    session.accept(inFlight, answer(9, [0], 11n));
    expect(session.state).toEqual({ sessionId: 9, epoch: 2, partitions: 1 });
    expect(named(session.build([at(0, 4n)]))).toEqual(["0@4"]);
  });

  it("an incremental answer without the session id (the broker ended it) makes the next fetch open a new one", () => {
    const session = new FetchSessionHandler();
    session.accept(session.build([at(0, 0n)]), answer(9, [0]));
    expect(session.accept(session.build([at(0, 1n)]), answer(0, [0]))).toBe(true);
    expect(session.build([at(0, 1n)])).toMatchObject({ sessionId: 0, epoch: 0, incremental: false });
  });

  it("when the broker declines a session (id 0: its cache is full) every fetch stays full", () => {
    const session = new FetchSessionHandler();
    session.accept(session.build([at(0, 0n)]), answer(0, [0]));
    expect(session.build([at(0, 0n)])).toMatchObject({ sessionId: 0, epoch: 0, incremental: false });
  });

  it("disabled, every fetch is sessionless and full; closing an open session names it with epoch -1", () => {
    const off = new FetchSessionHandler({ enabled: false });
    expect(off.build([at(0, 0n)])).toMatchObject({ sessionId: 0, epoch: -1, incremental: false });
    const session = new FetchSessionHandler();
    expect(session.closing()).toBeUndefined();
    session.accept(session.build([at(0, 0n)]), answer(9, [0]));
    expect(session.closing()).toMatchObject({ sessionId: 9, epoch: -1, partitions: [] });
    expect(session.closing()).toBeUndefined();
  });

  it("a session whose last request failed is still closed: the broker may hold it yet", () => {
    const session = new FetchSessionHandler();
    session.accept(session.build([at(0, 0n)]), answer(9, [0]));
    session.failed(session.build([at(0, 1n)]));
    expect(session.closing()).toMatchObject({ sessionId: 9, epoch: -1 });
  });
});

/**
 * A broker's fetch sessions as Kafka 3.9's `FetchSession.scala` keeps them: a full fetch (epoch 0) closes
 * the named session and opens a new one (or none when the cache is full); an incremental one must name a
 * held session at its expected epoch, updates and forgets partitions, and answers a partition only when it
 * has records, a new high watermark or log start offset, or an error. An incremental fetch that leaves the
 * session empty ends it (answered sessionless). A throttled answer names no partition: a throttled full
 * fetch opens no session (id 0); a throttled incremental one still applies the request's changes and moves
 * the epoch, but reports nothing (the cached offsets stay as they were).
 */
class BrokerSessions {
  private readonly sessions = new Map<
    number,
    { epoch: number; parts: Map<number, { offset: bigint; hw: bigint; start: bigint }> }
  >();
  private nextId = 1;
  cacheFull = false;
  /** The next answer without an error is throttled. */
  throttleNext = false;

  constructor(readonly truth: Map<number, { hw: bigint; start: bigint }>) {}

  evictAll(): void {
    this.sessions.clear();
  }

  handle(fetch: SessionFetch): SessionAnswer {
    const row = (partition: number) => {
      const t = this.truth.get(partition)!;
      return { topic: "t", partition, highWatermark: t.hw, lastStableOffset: t.hw, logStartOffset: t.start };
    };
    if (fetch.epoch <= 0) {
      this.sessions.delete(fetch.sessionId);
      if (this.throttleNext) {
        this.throttleNext = false;
        return { errorCode: 0, sessionId: 0, partitions: [] };
      }
      let sessionId = 0;
      if (fetch.epoch === 0 && !this.cacheFull) {
        sessionId = this.nextId++;
        const parts = new Map(
          fetch.partitions.map((p) => {
            const t = this.truth.get(p.partition)!;
            return [p.partition, { offset: p.fetchOffset, hw: t.hw, start: t.start }];
          }),
        );
        this.sessions.set(sessionId, { epoch: 1, parts });
      }
      return { errorCode: 0, sessionId, partitions: fetch.partitions.map((p) => row(p.partition)) };
    }
    const session = this.sessions.get(fetch.sessionId);
    if (!session) return { errorCode: FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, partitions: [] };
    if (session.epoch !== fetch.epoch)
      return { errorCode: INVALID_FETCH_SESSION_EPOCH, sessionId: 0, partitions: [] };
    session.epoch++;
    for (const p of fetch.partitions) {
      const cached = session.parts.get(p.partition);
      if (cached) cached.offset = p.fetchOffset;
      else session.parts.set(p.partition, { offset: p.fetchOffset, hw: -1n, start: -1n });
    }
    for (const p of fetch.forgotten) session.parts.delete(p.partition);
    if (session.parts.size === 0) {
      this.sessions.delete(fetch.sessionId);
      return { errorCode: 0, sessionId: 0, partitions: [] };
    }
    if (this.throttleNext) {
      this.throttleNext = false;
      return { errorCode: 0, sessionId: fetch.sessionId, partitions: [] };
    }
    const partitions: SessionAnswer["partitions"][number][] = [];
    for (const [partition, cached] of session.parts) {
      const t = this.truth.get(partition)!;
      const records = cached.offset < t.hw;
      if (records || cached.hw !== t.hw || cached.start !== t.start) partitions.push(row(partition));
      cached.hw = t.hw;
      cached.start = t.start;
    }
    return { errorCode: 0, sessionId: fetch.sessionId, partitions };
  }
}

type Step =
  | { kind: "produce"; partition: number; records: number }
  | { kind: "deleteRecords"; partition: number }
  | { kind: "fetch"; wanted: number[] }
  | { kind: "evict" }
  | { kind: "throttle" }
  | { kind: "cacheFull"; full: boolean };

const PARTITIONS = 6;
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("produce" as const),
    partition: fc.nat(PARTITIONS - 1),
    records: fc.integer({ min: 1, max: 5 }),
  }),
  fc.record({ kind: fc.constant("deleteRecords" as const), partition: fc.nat(PARTITIONS - 1) }),
  {
    arbitrary: fc.record({
      kind: fc.constant("fetch" as const),
      wanted: fc.uniqueArray(fc.nat(PARTITIONS - 1)),
    }),
    weight: 4,
  },
  fc.record({ kind: fc.constant("evict" as const) }),
  fc.record({ kind: fc.constant("throttle" as const) }),
  fc.record({ kind: fc.constant("cacheFull" as const), full: fc.boolean() }),
);

describe("a fetch session against a model of Kafka's broker sessions", () => {
  it("every fetch sees each wanted partition as a sessionless full fetch would: records, high watermark, log start", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const truth = new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, { hw: 0n, start: 0n }]));
        const broker = new BrokerSessions(truth);
        const session = new FetchSessionHandler();
        const consumed = new Map<number, bigint>();
        let evicted = false;
        for (const s of steps) {
          if (s.kind === "produce") truth.get(s.partition)!.hw += BigInt(s.records);
          else if (s.kind === "deleteRecords") truth.get(s.partition)!.start = truth.get(s.partition)!.hw;
          else if (s.kind === "evict") {
            broker.evictAll();
            evicted = true;
          } else if (s.kind === "throttle") broker.throttleNext = true;
          else if (s.kind === "cacheFull") broker.cacheFull = s.full;
          else {
            const wanted = s.wanted.map((p) => at(p, consumed.get(p) ?? 0n));
            const throttled = broker.throttleNext;
            let sent = session.build(wanted);
            let got = broker.handle(sent);
            if (!session.accept(sent, got)) {
              // The client keeps the session's epochs right: only a session the broker dropped fails.
              expect(evicted, `session error ${got.errorCode} without an eviction`).toBe(true);
              sent = session.build(wanted);
              got = broker.handle(sent);
              expect(session.accept(sent, got)).toBe(true);
            }
            expect(got.errorCode).toBe(0);
            evicted = false;
            const answered = new Map(got.partitions.map((p) => [p.partition, p]));
            if (throttled && !broker.throttleNext) {
              // A throttled answer gives nothing: no records, so no position moves; the next fetches see
              // everything again (checked on the rounds that follow).
              expect(got.partitions).toEqual([]);
              continue;
            }
            for (const w of wanted) {
              const t = truth.get(w.partition)!;
              const seen =
                answered.get(w.partition) ??
                (sent.incremental ? session.unchanged("t", w.partition) : undefined);
              expect(seen, `partition ${w.partition}`).toBeDefined();
              expect([seen!.highWatermark, seen!.logStartOffset]).toEqual([t.hw, t.start]);
              // Records come only in an answer; a left-out partition has none to give.
              const records = answered.has(w.partition) && w.fetchOffset < t.hw;
              expect(records).toBe(w.fetchOffset < t.hw);
              // The fetcher takes what it was given: its position moves to the high watermark.
              if (records) consumed.set(w.partition, t.hw);
            }
          }
        }
      }),
      { numRuns: 300, verbose: 1 },
    );
  });
});
