/**
 * Runs the commands of one mirror (create, alter, delete; add, remove, pause, resume topics) one at a
 * time, in call order.
 *
 * Each command reads the topics' `mirror.name` and the partitions' states, may wait (for the coordinators to
 * load, for the source), then writes `mirror.name`. Two commands interleaved at those waits would act on
 * what the other has already changed: a pause that checked MIRRORING before a concurrent remove wrote
 * `.removed` then overwrote it with `.paused`, leaving a failed-over topic marked paused. Kafka's controller
 * applies such requests one by one; so does this queue, per mirror (different mirrors still run in
 * parallel). A command that fails does not stop the ones queued behind it.
 */
export class MirrorCommandQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `command` once every earlier command of `mirror` has settled; resolves or rejects as it does. */
  run<T>(mirror: string, command: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(mirror) ?? Promise.resolve();
    const result = previous.then(command);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(mirror, tail);
    void tail.then(() => {
      if (this.tails.get(mirror) === tail) this.tails.delete(mirror);
    });
    return result;
  }
}
