/**
 * How many FAILED partitions' retry timers wait for a destination leader that lagged the metadata's leader
 * epoch to catch up (`RefusingLeader.lagged`), over every coordinator of one cluster. That catch-up reaches
 * the engine as a leader epoch change of a partition the broker kept leading, which it otherwise leaves
 * alone (every partition of a failover gets one: a lookup each cost a regex and two key hashes), so such a
 * change is looked at only while some retry waits for one.
 */
export class LeaderCatchUps {
  private waiting = 0;

  /** True while at least one retry waits for a lagging leader to catch up. */
  get awaited(): boolean {
    return this.waiting > 0;
  }

  /** A retry timer that waits for a catch-up was armed. */
  add(): void {
    this.waiting++;
  }

  /** One such timer fired or was cancelled. */
  remove(): void {
    this.waiting--;
  }
}
