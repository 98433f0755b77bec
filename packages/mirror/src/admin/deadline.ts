import type { Scheduler } from "@cluster-mirror/cluster";

/**
 * `work`'s answer if it comes within `ms` on `scheduler`, else a rejection with `onTimeout()` (and `work`'s
 * later answer is dropped). For calls to a source that may hang rather than refuse (a paused broker answers
 * nothing until the client's own request timeout, 30 s or more): an operator's command keeps its own bound.
 */
export function answerWithin<T>(
  work: Promise<T>,
  scheduler: Scheduler,
  ms: number,
  onTimeout: () => Error,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const cancel = scheduler.schedule(
      () => {
        if (settled) return;
        settled = true;
        reject(onTimeout());
      },
      Math.max(0, ms),
    );
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        cancel();
        reject(error);
      },
    );
  });
}
