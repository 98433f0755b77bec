import type { MirrorPartitionView } from "@cluster-mirror/mirror";
import { compactHistory, foldHistory, keyIdOf, type MirrorStateHistory } from "./mirror-state-history";
import type { Violation } from "./violation";

/**
 * Event-sourcing round trip (spec §6): replaying the full `__mirror_state` history and replaying what
 * compaction keeps give the same state per key, and that state is what the live coordinators report
 * (`coordinators.describe()`: state, StateEpoch, LME, error, retry attempt, previous state). Each key is
 * owned by one coordinator: a key listed twice means a coordinator that lost its partition still serves it.
 * Run on a settled world (no append in flight).
 */
export function checkReplayMatchesLive(
  label: string,
  history: MirrorStateHistory,
  views: readonly MirrorPartitionView[],
): Violation[] {
  const out: Violation[] = [];
  const full = foldHistory(history.entries);
  const compacted = foldHistory(compactHistory(history.entries));
  for (const [id, f] of full) {
    const c = compacted.get(id);
    if (JSON.stringify(c) !== JSON.stringify(f)) {
      out.push({
        invariant: "replay-compacted",
        message: `${label} ${id}: full replay ${JSON.stringify(f)} but compacted replay ${JSON.stringify(c)}`,
      });
    }
  }
  const seen = new Set<string>();
  for (const v of views) {
    const id = keyIdOf(v.key.mirror, v.key.topicId, v.key.partition);
    if (seen.has(id)) {
      out.push({
        invariant: "single-coordinator",
        message: `${label} ${id}: described by more than one coordinator (a fenced coordinator still serves it)`,
      });
    }
    seen.add(id);
    const f = full.get(id);
    const s = f?.state;
    if (!s) {
      out.push({
        invariant: "replay-live",
        message: `${label} ${id}: live state ${v.state} (stateEpoch ${v.stateEpoch}) but no MirrorPartitionState in __mirror_state`,
      });
      continue;
    }
    const live = {
      state: v.state,
      stateEpoch: v.stateEpoch,
      lme: v.lastMirrorEpoch,
      error: v.errorMessage,
      retry: v.retryAttempt,
      previous: v.previousState,
    };
    const replayed = {
      state: s.state,
      stateEpoch: s.stateEpoch,
      lme: f.lastMirrorEpoch,
      error: s.errorMessage,
      retry: s.retryAttempt,
      previous: s.previousState,
    };
    if (JSON.stringify(live) !== JSON.stringify(replayed)) {
      out.push({
        invariant: "replay-live",
        message: `${label} ${id}: live ${JSON.stringify(live)} but replayed ${JSON.stringify(replayed)}`,
      });
    }
  }
  return out;
}
