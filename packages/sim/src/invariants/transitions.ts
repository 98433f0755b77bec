import { canTransition, isLifecycleState } from "@cluster-mirror/machines";
import type { MirrorPartitionStateValue } from "@cluster-mirror/protocol";
import type { MirrorStateHistory } from "./mirror-state-history";
import type { Violation } from "./violation";

/**
 * Valid-from (spec §4) over the persisted history: for each key, every consecutive pair of
 * `MirrorPartitionState` records is a transition `canTransition` allows (null before the first record and
 * after a tombstone), and StateEpoch grows by exactly 1 per transition and never goes back. A record with
 * the same state and StateEpoch as the previous one is not a transition (a leader-epoch update) and is
 * allowed. Keys in partitions whose history is incomplete are checked from their first readable record.
 */
export function checkTransitions(label: string, history: MirrorStateHistory): Violation[] {
  const out: Violation[] = history.undecodable.map((u) => ({
    invariant: "mirror-state-decodes",
    message: `${label}: undecodable __mirror_state record ${u}`,
  }));
  const prev = new Map<string, MirrorPartitionStateValue | null>();
  const incomplete = new Set(history.incomplete);
  for (const e of history.entries) {
    if (e.kind !== "MirrorPartitionState") continue;
    const before = prev.get(e.keyId);
    prev.set(e.keyId, e.state);
    if (e.state === null) continue;
    const where = `${label} __mirror_state-${e.statePartition}@${e.offset} ${e.keyId}`;
    const to = e.state.state;
    if (!isLifecycleState(to)) {
      out.push({ invariant: "valid-from", message: `${where}: unknown state ${to}` });
      continue;
    }
    if (before === undefined && incomplete.has(e.statePartition)) continue;
    const from = before ?? null;
    if (from !== null && from.state === to && from.stateEpoch === e.state.stateEpoch) continue;
    const fromState = from === null ? null : from.state;
    if (fromState !== null && !isLifecycleState(fromState)) continue;
    if (!canTransition(fromState, to)) {
      out.push({
        invariant: "valid-from",
        message: `${where}: ${fromState ?? "null"} -> ${to} (stateEpoch ${from?.stateEpoch ?? "-"} -> ${e.state.stateEpoch}) is not in the valid-from table`,
      });
    }
    if (from !== null && e.state.stateEpoch !== from.stateEpoch + 1) {
      out.push({
        invariant: "state-epoch",
        message: `${where}: ${fromState} -> ${to} moved stateEpoch ${from.stateEpoch} -> ${e.state.stateEpoch} (expected +1 per transition)`,
      });
    }
  }
  return out;
}
