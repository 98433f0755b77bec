import { foldMirrorState, type MirrorPartitionView } from "@cluster-mirror/mirror";
import { encodeMirrorStateRecord, type MirrorStateRecord } from "@cluster-mirror/protocol";
import {
  compactHistory,
  foldHistory,
  keyIdOf,
  type MirrorStateEntry,
  type MirrorStateHistory,
} from "./mirror-state-history";
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
  // What a coordinator loading the log recovers (the engine's fold: the records and what the history says
  // of the session, e.g. whether PREPARING's truncation completed) must not depend on the cleaner either.
  const recoveredFull = recovered(history.entries);
  const recoveredCompacted = recovered(compactHistory(history.entries));
  for (const [id, f] of recoveredFull) {
    const c = recoveredCompacted.get(id);
    if (JSON.stringify(c) !== JSON.stringify(f)) {
      out.push({
        invariant: "recovery-compacted",
        message: `${label} ${id}: a coordinator loading the full history recovers ${JSON.stringify(f)} but one loading the compacted log ${JSON.stringify(c)}`,
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

/** The engine's fold of entries, encoded again as the records they were read from. */
function recovered(entries: readonly MirrorStateEntry[]) {
  return foldMirrorState(
    entries.map((e, i) => {
      const at = e.keyId.lastIndexOf("/");
      const mirrorName = e.keyId.slice(0, at - 37);
      const topicId = e.keyId.slice(at - 36, at);
      const partition = Number(e.keyId.slice(at + 1));
      const key = { mirrorName, topicId, partition };
      const record = (
        e.kind === "MirrorPartitionState"
          ? { key: { ...key, kind: e.kind }, value: e.state }
          : {
              key: { ...key, kind: e.kind },
              value: e.lastMirrorEpoch === null ? null : { lastMirrorEpoch: e.lastMirrorEpoch },
            }
      ) as MirrorStateRecord;
      return { offset: BigInt(i), ...encodeMirrorStateRecord(record) };
    }),
    () => {},
  );
}
