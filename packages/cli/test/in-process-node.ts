import type { MirrorAdmin } from "@cluster-mirror/mirror";
import { KafkaError } from "@cluster-mirror/protocol";

/**
 * `addTopics` on an in-process node that just started: the coordinators of `__mirror_state` load right
 * after start, and until then an add is refused as retriable, so it is asked again every 50 ms.
 */
export async function addTopicsWhenReady(admin: MirrorAdmin, mirror: string, regex: string): Promise<void> {
  for (;;) {
    try {
      await admin.addTopics(mirror, regex);
      return;
    } catch (error) {
      if (!(error instanceof KafkaError && error.retriable)) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
