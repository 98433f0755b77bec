import { sleep } from "@cluster-mirror/cluster";
import type { MirrorNode } from "../node/mirror-node";

/** The demo waited longer than its bound for something that should have happened. */
export class DemoTimeoutError extends Error {}

/**
 * Polls `predicate` every `everyMs` on the node's scheduler until it holds; DemoTimeoutError naming `what`
 * after `timeoutMs` on the node's clock.
 */
export async function waitUntil(
  node: MirrorNode,
  what: string,
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<void> {
  const deadline = node.clock.now() + timeoutMs;
  while (!(await predicate())) {
    if (node.clock.now() >= deadline) {
      throw new DemoTimeoutError(`the demo waited ${timeoutMs} ms for ${what}; rerun it, or report a bug`);
    }
    await sleep(node.scheduler, everyMs);
  }
}
