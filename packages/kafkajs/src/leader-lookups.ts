/**
 * A per-partition question to the partition's leader that Kafka answers for many partitions in one request:
 * ListOffsets (by timestamp, at an isolation level) or OffsetsForLeaderEpoch.
 */
export type LeaderLookup =
  | {
      readonly api: "ListOffsets";
      readonly topic: string;
      readonly partition: number;
      readonly isolationLevel: number;
      readonly timestamp: bigint;
    }
  | {
      readonly api: "OffsetsForLeaderEpoch";
      readonly topic: string;
      readonly partition: number;
      readonly leaderEpoch: number;
    };

/** One partition's answer: the offset (or end offset) and the leader epoch that goes with it. */
export interface LookupAnswer {
  errorCode: number;
  offset: bigint;
  leaderEpoch: number;
}

/** Sends lookups of one kind to one leader as one request; answers keyed by `partitionKey`. */
export type SendLookups = (
  leaderId: number,
  lookups: readonly LeaderLookup[],
) => Promise<ReadonlyMap<string, LookupAnswer>>;

const UNKNOWN_TOPIC_OR_PARTITION = 3;

export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

interface Waiter {
  lookup: LeaderLookup;
  resolve: (answer: LookupAnswer) => void;
  reject: (error: unknown) => void;
}

interface Batch {
  leaderId: number;
  waiters: Map<string, Waiter>;
}

/**
 * Coalesces the lookups made in the same event-loop turn into one request per leader and kind, as Kafka's
 * AdminClient groups ListOffsets by leader: adding a topic of 256 partitions asks its leader for their log
 * start offsets once, not 256 times one after the other on one connection.
 *
 * A partition appears at most once in a request (Kafka answers INVALID_REQUEST to a duplicate), so a second
 * lookup of it in the same turn goes into a request of its own. A request that fails (disconnect, timeout)
 * rejects its own lookups and no others; a partition the answer leaves out gets UNKNOWN_TOPIC_OR_PARTITION.
 */
export class LeaderLookupBatcher {
  private readonly pending = new Map<string, Batch[]>();
  private scheduled = false;

  constructor(private readonly send: SendLookups) {}

  lookup(leaderId: number, lookup: LeaderLookup): Promise<LookupAnswer> {
    return new Promise((resolve, reject) => {
      const kind = lookup.api === "ListOffsets" ? `ListOffsets\u0000${lookup.isolationLevel}` : lookup.api;
      const batchKey = `${leaderId}\u0000${kind}`;
      const batches = this.pending.get(batchKey) ?? [];
      this.pending.set(batchKey, batches);
      const key = partitionKey(lookup.topic, lookup.partition);
      let batch = batches.find((b) => !b.waiters.has(key));
      if (!batch) {
        batch = { leaderId, waiters: new Map() };
        batches.push(batch);
      }
      batch.waiters.set(key, { lookup, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batches = [...this.pending.values()].flat();
    this.pending.clear();
    for (const batch of batches) void this.sendBatch(batch);
  }

  private async sendBatch(batch: Batch): Promise<void> {
    let answers: ReadonlyMap<string, LookupAnswer>;
    try {
      answers = await this.send(
        batch.leaderId,
        [...batch.waiters.values()].map((w) => w.lookup),
      );
    } catch (error) {
      for (const w of batch.waiters.values()) w.reject(error);
      return;
    }
    for (const [key, w] of batch.waiters)
      w.resolve(answers.get(key) ?? { errorCode: UNKNOWN_TOPIC_OR_PARTITION, offset: -1n, leaderEpoch: -1 });
  }
}
