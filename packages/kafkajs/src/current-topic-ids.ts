/** Asks the source for the ids its topics have now (a Metadata request); topics it lacks are left out. */
export type AskTopicIds = (topics: readonly string[]) => Promise<ReadonlyMap<string, string>>;

/**
 * Coalesces the "which id does this topic have now" questions of one event-loop turn into one request, as
 * `LeaderLookupBatcher` does for offsets: a failback re-adding thousands of partitions confirms their
 * topics' ids with one Metadata request per turn, not one per partition. A question joins only a request
 * not yet sent, so the answer is always from after the question was asked (what confirming an earlier
 * read by name needs). A failed request rejects the questions it carried.
 */
export class CurrentTopicIds {
  private pending: Set<string> | undefined;
  private answer: Promise<ReadonlyMap<string, string>> | undefined;

  constructor(private readonly ask: AskTopicIds) {}

  /** The id the topic has on the source now; undefined when the source has no topic of that name. */
  async of(topic: string): Promise<string | undefined> {
    if (this.pending === undefined || this.answer === undefined) {
      const topics = new Set<string>();
      this.pending = topics;
      this.answer = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.pending = undefined;
        this.answer = undefined;
        return this.ask([...topics]);
      });
    }
    this.pending.add(topic);
    return (await this.answer).get(topic);
  }
}
