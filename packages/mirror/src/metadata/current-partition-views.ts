import type { MirrorPartitionView } from "../ports";

/**
 * The views whose topic id is the one the destination's topic of that name has now. A topic failed over
 * (STOPPED), deleted, and added again after the source created it anew has a new id: the old partition's
 * state record stays in `__mirror_state` until the mirror is deleted, but it belongs to a topic that no
 * longer exists, and counting it would show each partition twice (its old state and its new one). A view
 * whose topic the destination no longer has at all stays: it still says what became of that partition.
 */
export function currentPartitionViews(
  views: readonly MirrorPartitionView[],
  destinationTopicId: (topic: string) => string | undefined,
): MirrorPartitionView[] {
  return views.filter((v) => {
    const current = destinationTopicId(v.key.topic);
    return current === undefined || current === v.key.topicId;
  });
}
