import type { SourceFetchPartition } from "@cluster-mirror/mirror";
import { partitionKey } from "./leader-lookups";

/** Kafka's `FetchMetadata` epochs: 0 opens a session (a full fetch), -1 fetches without one. */
export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;
/** The broker no longer holds the session (evicted, restarted): start a new one. */
export const FETCH_SESSION_ID_NOT_FOUND = 70;
/** The epoch sent is not the one the broker expects: start a new session. */
export const INVALID_FETCH_SESSION_EPOCH = 71;
/** An incremental fetch named topics otherwise (by name, by id) than the session was opened with. */
export const FETCH_SESSION_TOPIC_ID_ERROR = 106;
/** The session errors after which the fetch is sent again at once, full, opening a new session. */
const SESSION_ERRORS: ReadonlySet<number> = new Set([
  FETCH_SESSION_ID_NOT_FOUND,
  INVALID_FETCH_SESSION_EPOCH,
  FETCH_SESSION_TOPIC_ID_ERROR,
]);

/** What a fetch asks of one partition (the engine's own type); a change of any field puts the partition in the next request. */
export type SessionPartition = SourceFetchPartition;

/**
 * The offsets a fetch answer carries for a partition besides its records. The broker's session tracks the
 * high watermark and log start offset (a change of either puts the partition in the answer), not the last
 * stable offset: for a partition left out, it is the last one reported, which may be behind.
 */
export interface SessionOffsets {
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
}

/** One request of a session: which session and epoch, and the partitions it names. */
export interface SessionFetch {
  sessionId: number;
  epoch: number;
  /** Every wanted partition (a full fetch), or only the added and changed ones (an incremental one). */
  partitions: readonly SessionPartition[];
  /** Partitions the session holds that are no longer wanted (incremental fetches only). */
  forgotten: readonly { topic: string; partition: number; topicId?: string }[];
  /** True when the broker may leave out partitions the session holds unchanged. */
  incremental: boolean;
}

/** The parts of a fetch answer the session keeps: the session id, and each named partition's offsets. */
export interface SessionAnswer {
  errorCode: number;
  sessionId: number;
  partitions: readonly (SessionOffsets & { topic: string; partition: number })[];
}

/**
 * The client side of one fetch session (KIP-227), as Kafka's `FetchSessionHandler` keeps it: the first
 * fetch is full and opens a session on the broker; later ones are incremental and name only the partitions
 * that were added or whose fetch position changed (and the ones dropped, as forgotten), and the broker
 * answers only the partitions with records, new offsets or an error. With thousands of mirrored
 * partitions, most of them idle, a round costs bytes for the busy ones alone.
 *
 * The handler also remembers the offsets the session last reported for each partition (what the broker's
 * session cache holds, so what it compares against), and `unchanged` gives them for a partition an
 * incremental answer left out: the caller still sees every partition it asked for.
 *
 * One request of a session is in flight at a time; a fetch built while one is (a fetch sent ahead whose
 * answer went unused) is sessionless (id 0, epoch -1), which neither reads nor moves the session. A
 * session error (70, 71, 106), any other request-level error or a broken connection closes the session: the
 * next fetch is full again, naming the old id so the broker frees it.
 */
export class FetchSessionHandler {
  private sessionId = 0;
  private epoch = INITIAL_EPOCH;
  private inFlight = false;
  /** What the broker's session holds: each partition as last named in a request it answered. */
  private readonly sent = new Map<string, SessionPartition>();
  /** The offsets the session last answered for each partition. */
  private readonly reported = new Map<string, SessionOffsets>();

  /** `enabled` false: every fetch is sessionless and full (Kafka's brokers before 1.1 had no sessions). */
  constructor(private readonly options: { enabled: boolean } = { enabled: true }) {}

  /** The request for these partitions: full, incremental, or sessionless while another is in flight. */
  build(wanted: readonly SessionPartition[]): SessionFetch {
    if (this.inFlight || !this.options.enabled)
      return { sessionId: 0, epoch: FINAL_EPOCH, partitions: wanted, forgotten: [], incremental: false };
    this.inFlight = true;
    // A partition now wanted under another topic id (its topic was replaced) cannot be moved within the
    // session: the broker holds it by id. Start a new session, with a full fetch.
    if (this.epoch !== INITIAL_EPOCH && wanted.some((p) => this.replacesTopicId(p))) this.close();
    if (this.epoch === INITIAL_EPOCH)
      return {
        sessionId: this.sessionId,
        epoch: INITIAL_EPOCH,
        partitions: wanted,
        forgotten: [],
        incremental: false,
      };
    const keys = new Set<string>();
    const changed: SessionPartition[] = [];
    for (const p of wanted) {
      const key = partitionKey(p.topic, p.partition);
      keys.add(key);
      const before = this.sent.get(key);
      if (!before || !samePosition(before, p)) changed.push(p);
    }
    const forgotten: { topic: string; partition: number; topicId?: string }[] = [];
    for (const [key, p] of this.sent) {
      if (keys.has(key)) continue;
      forgotten.push(
        p.topicId === undefined
          ? { topic: p.topic, partition: p.partition }
          : { topic: p.topic, partition: p.partition, topicId: p.topicId },
      );
    }
    return {
      sessionId: this.sessionId,
      epoch: this.epoch,
      partitions: changed,
      forgotten,
      incremental: true,
    };
  }

  /**
   * Takes the answer to `fetch` into the session. False when the answer is a session error: the session is
   * closed, and the caller may send the fetch again (`build` then makes it full).
   */
  accept(fetch: SessionFetch, answer: SessionAnswer): boolean {
    if (fetch.epoch === FINAL_EPOCH) return true;
    this.inFlight = false;
    if (answer.errorCode !== 0) {
      // The broker does not know this id (any more): the next full fetch names none, as Kafka's client
      // does, so it cannot close a session another client got under the same id after a broker restart.
      if (answer.errorCode === FETCH_SESSION_ID_NOT_FOUND) this.sessionId = 0;
      this.close();
      return !SESSION_ERRORS.has(answer.errorCode);
    }
    if (fetch.incremental && answer.sessionId !== this.sessionId) {
      // The broker ended the session (an incremental fetch that left it empty is answered sessionless).
      this.sessionId = 0;
      this.close();
      return true;
    }
    if (!fetch.incremental) {
      this.sent.clear();
      this.reported.clear();
      // Id 0: the broker declined to open a session (its cache is full); the next fetch is full again.
      this.sessionId = answer.sessionId;
      if (answer.sessionId === 0) return true;
    }
    for (const p of fetch.partitions) this.sent.set(partitionKey(p.topic, p.partition), p);
    for (const p of fetch.forgotten) {
      const key = partitionKey(p.topic, p.partition);
      this.sent.delete(key);
      this.reported.delete(key);
    }
    for (const p of answer.partitions) {
      this.reported.set(partitionKey(p.topic, p.partition), {
        highWatermark: p.highWatermark,
        lastStableOffset: p.lastStableOffset,
        logStartOffset: p.logStartOffset,
      });
    }
    this.epoch = this.epoch === 0x7fffffff ? 1 : this.epoch + 1;
    return true;
  }

  /** The request for `fetch` failed (a broken connection, a timeout): the next fetch opens a new session. */
  failed(fetch: SessionFetch): void {
    if (fetch.epoch === FINAL_EPOCH) return;
    this.inFlight = false;
    this.close();
  }

  /**
   * The request that closes the open session (its id with epoch -1, no partitions), as a consumer sends on
   * close so the broker frees the slot at once rather than at eviction; undefined when no id is held. Sent
   * whatever the epoch, as Kafka's client does: after a failed request the broker may still hold the
   * session (closing an id it no longer has is harmless).
   */
  closing(): SessionFetch | undefined {
    if (this.sessionId === 0) return undefined;
    const fetch = {
      sessionId: this.sessionId,
      epoch: FINAL_EPOCH,
      partitions: [],
      forgotten: [],
      incremental: false,
    };
    this.sessionId = 0;
    this.close();
    return fetch;
  }

  /** The offsets of a partition an incremental answer left out (the broker had nothing new), if known. */
  unchanged(topic: string, partition: number): SessionOffsets | undefined {
    return this.reported.get(partitionKey(topic, partition));
  }

  /** The session's id and next epoch (0 and 0 before one is open). */
  get state(): { sessionId: number; epoch: number; partitions: number } {
    return { sessionId: this.sessionId, epoch: this.epoch, partitions: this.sent.size };
  }

  private replacesTopicId(p: SessionPartition): boolean {
    const before = this.sent.get(partitionKey(p.topic, p.partition));
    return before !== undefined && before.topicId !== p.topicId;
  }

  private close(): void {
    this.epoch = INITIAL_EPOCH;
    this.sent.clear();
    this.reported.clear();
  }
}

function samePosition(a: SessionPartition, b: SessionPartition): boolean {
  return (
    a.fetchOffset === b.fetchOffset &&
    a.lastFetchedEpoch === b.lastFetchedEpoch &&
    a.currentLeaderEpoch === b.currentLeaderEpoch &&
    a.maxBytes === b.maxBytes
  );
}
