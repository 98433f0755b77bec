/** The time-travel endpoint's records: defined by the engine (`@cluster-mirror/mirror`), which the node serves. */
export type { StateHistoryPage, StateHistoryRecord, StateValue } from "@cluster-mirror/mirror";
