/** One decoded `__mirror_state` record, as `/ui/api/mirror-state` serves it. */
export interface StateHistoryRecord {
  /** Index in the node's merged history (every partition, time order). */
  readonly position: number;
  /** The `__mirror_state` partition and the record's offset in it. */
  readonly partition: number;
  readonly offset: number;
  /** The record's timestamp (ms since the epoch, the node's clock). */
  readonly timestamp: number;
  /** The decoded key; null when the record did not decode (then `error` says why). */
  readonly key: {
    readonly kind: "MirrorPartitionState" | "LastMirrorEpochs";
    readonly mirror: string;
    readonly topicId: string;
    /** The topic's current name, null when the topic no longer exists. */
    readonly topic: string | null;
    readonly partition: number;
  } | null;
  /** The decoded value; null for a tombstone. */
  readonly value: StateValue | { readonly lastMirrorEpoch: number } | null;
  readonly error?: string;
}

/** The `MirrorPartitionState` value of spec §6. */
export interface StateValue {
  readonly state: string;
  readonly leaderEpoch: number;
  readonly stateEpoch: number;
  readonly errorMessage: string | null;
  readonly retryAttempt: number;
  readonly previousState: string | null;
}

/** One page of the history. */
export interface StateHistoryPage {
  /** Records in the whole history (the slider's range is 0..total-1). */
  readonly total: number;
  readonly offset: number;
  readonly records: readonly StateHistoryRecord[];
  /** Each readable `__mirror_state` partition's offsets (a log start above 0: compaction or deletion). */
  readonly partitions: readonly { partition: number; logStartOffset: number; logEndOffset: number }[];
}
