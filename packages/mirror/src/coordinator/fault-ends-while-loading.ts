/**
 * The ends of faults a FAILED partition may wait out (see `RetryWaitsFor`) that this broker heard while
 * its shard of a `__mirror_state` partition was loading: the destination's controller active again, a
 * mirror's source answering again. No coordinator of the shard's partitions heard them (the one before was
 * gone, this one had not loaded), and a coordinator moves only through the controller's election: the
 * controller's return after an outage elects the new one, and then tells the brokers it is back, while that
 * one loads. A source's return is heard by each broker at its own metadata refresh, not by all at once:
 * one this broker's latest refresh found (just before the load began) the coordinator before may not have
 * heard yet, so the load starts with it noted. A FAILED the shard loads whose wait one of them may have
 * ended retries at once (see `EffectExecutor`'s loaded retries).
 */
export class FaultEndsWhileLoading {
  private controller = false;
  private readonly sources = new Set<string>();

  /** The destination's controller is active again after it had none. */
  controllerBack(): void {
    this.controller = true;
  }

  /** `mirror`'s source answers again after it did not. */
  sourceBack(mirror: string): void {
    this.sources.add(mirror);
  }

  /** Whether the destination's controller came back while the shard loaded. */
  get controllerCameBack(): boolean {
    return this.controller;
  }

  /** Whether `mirror`'s source came back while the shard loaded. */
  sourceCameBack(mirror: string): boolean {
    return this.sources.has(mirror);
  }
}
