import { closestName } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";

/**
 * Mirror-only errors (KIP-1279 review names). Kafka has no codes for them yet, so they carry -1, like the
 * project's other mirror-only errors (READ_ONLY_TOPIC, INVALID_MIRROR_STATE). None is retriable: the same
 * call fails again until the operator changes something.
 */

/** The named mirror does not exist on this cluster (UNKNOWN_MIRROR). */
export class UnknownMirrorError extends KafkaError {
  /** The mirror name that was asked for. */
  readonly mirror: string;

  constructor(mirror: string, known: readonly string[]) {
    const list = known.length === 0 ? "this cluster has no mirrors" : `known mirrors: ${known.join(", ")}`;
    const close = closestName(mirror, known);
    const advice =
      close !== undefined
        ? `Did you mean '${close}'?`
        : `Check the name (kafka-mirrors --list lists the mirrors), or create the mirror first (kafka-mirrors --create --mirror ${mirror} --mirror-config FILE).`;
    super("UNKNOWN_MIRROR", -1, false, `Mirror '${mirror}' does not exist (${list}). ${advice}`);
    this.mirror = mirror;
  }
}

/** A mirror name that breaks the naming rules (INVALID_MIRROR_NAME). */
export class InvalidMirrorNameError extends KafkaError {
  /** The refused name. */
  readonly mirror: string;

  constructor(mirror: string, reason: string) {
    super("INVALID_MIRROR_NAME", -1, false, `Mirror name '${mirror}' is invalid: ${reason}.`);
    this.mirror = mirror;
  }
}

/** A mirror with this name already exists (MIRROR_ALREADY_EXISTS, like TOPIC_ALREADY_EXISTS). */
export class MirrorAlreadyExistsError extends KafkaError {
  /** The mirror name. */
  readonly mirror: string;

  constructor(mirror: string) {
    super(
      "MIRROR_ALREADY_EXISTS",
      -1,
      false,
      `Mirror '${mirror}' already exists. Describe it with --describe --mirror ${mirror}, delete it first, or choose another name.`,
    );
    this.mirror = mirror;
  }
}

/**
 * A mirror-level operation the mirror's current state does not allow (INVALID_MIRROR_STATE), e.g. deleting
 * a mirror whose topics are still mirroring. Partition-level refusals are the machines package's
 * `InvalidMirrorStateError` (same error name and code).
 */
export class MirrorStateError extends KafkaError {
  /** The mirror the operation was refused for. */
  readonly mirror: string;

  constructor(mirror: string, message: string) {
    super("INVALID_MIRROR_STATE", -1, false, message);
    this.mirror = mirror;
  }
}

/** A mirror config that is missing, malformed, or an include/exclude regex that does not compile (INVALID_CONFIG). */
export class InvalidMirrorConfigError extends KafkaError {
  /** The config key at fault. */
  readonly config: string;
  /** The regex that did not compile, when the fault is a pattern. */
  readonly pattern: string | undefined;

  constructor(config: string, message: string, pattern?: string, options?: ErrorOptions) {
    super("INVALID_CONFIG", 40, false, message, options);
    this.config = config;
    this.pattern = pattern;
  }
}

/**
 * The source cluster could not be reached or answered with an error while the admin API needed it
 * (Kafka's NETWORK_EXCEPTION, code 13, retriable).
 */
export class SourceUnreachableError extends KafkaError {
  /** The mirror whose source failed. */
  readonly mirror: string;

  constructor(mirror: string, bootstrap: string, cause: unknown) {
    const said = cause instanceof Error ? cause.message : String(cause);
    // The source's own errors start with the mirror's name: said once is enough.
    const why = said.startsWith(`${mirror}: `) ? said.slice(mirror.length + 2) : said;
    super(
      "NETWORK_EXCEPTION",
      13,
      true,
      `Cannot reach the source cluster of mirror '${mirror}' at bootstrap.servers=${bootstrap}: ${why}. Check that the source is up and that bootstrap.servers and the security settings are right, then retry.`,
      { cause },
    );
    this.mirror = mirror;
  }
}

/**
 * The source is failing over the partition this call asked about (MIRROR_FAILOVER_IN_PROGRESS, retriable):
 * the last mirror epoch a failback aligns to is recorded only once the source's partition is STOPPED.
 */
export class SourceFailoverInProgressError extends KafkaError {
  /** The mirror whose source answered. */
  readonly mirror: string;

  constructor(mirror: string, cause: KafkaError) {
    super(
      "MIRROR_FAILOVER_IN_PROGRESS",
      -1,
      true,
      `The source cluster of mirror '${mirror}' answered that ${cause.message}. Nothing was changed: add the topics again once the failover there is done.`,
      { cause },
    );
    this.mirror = mirror;
  }
}

/**
 * Adding these topics would close a mirror loop (MIRROR_LOOP): the source already mirrors them from this
 * cluster, directly or through other clusters, so each copy would be read-only waiting for the other.
 * Refused before anything changes.
 */
export class MirrorLoopError extends KafkaError {
  /** The mirror the topics were to be added to. */
  readonly mirror: string;
  /** The topics that would loop, sorted. */
  readonly topics: readonly string[];
  /** The source's mirror that already mirrors them from this cluster. */
  readonly sourceMirror: string;

  /**
   * `path`: how the source's mirror leads back here (`loopPath`), "from this cluster (<id>)" by default (a
   * direct loop).
   */
  constructor(
    mirror: string,
    topics: readonly string[],
    sourceMirror: string,
    clusterId: string,
    path = `from this cluster (${clusterId})`,
  ) {
    const direct = path === `from this cluster (${clusterId})`;
    super(
      "MIRROR_LOOP",
      -1,
      false,
      direct
        ? `Cannot add [${topics.join(", ")}] to mirror '${mirror}': the source's mirror '${sourceMirror}' already mirrors ${topics.length === 1 ? "it" : "them"} ${path}, so the two copies would mirror each other and neither would accept writes. Nothing was changed. To fail back, first fail over on the source (remove the topics from its mirror '${sourceMirror}'), then add them here.`
        : `Cannot add [${topics.join(", ")}] to mirror '${mirror}': the source's mirror '${sourceMirror}' mirrors ${topics.length === 1 ? "it" : "them"} ${path}, so the copies round that loop would mirror each other, none would accept writes, and this cluster's records not yet round it would be truncated. Nothing was changed. To fail back, first fail over the cluster you want to write to (remove the topics from its mirror), then add them here.`,
    );
    this.mirror = mirror;
    this.topics = topics;
    this.sourceMirror = sourceMirror;
  }
}

/**
 * Adding the topics would truncate records written on this cluster since their failover
 * (UNSAFE_TRUNCATION): refused, and nothing changed, unless the operator asks for the truncation
 * (`truncateLocalWrites`, `--truncate-local-writes`), as Cluster Linking's truncate-and-restore.
 */
export class UnsafeTruncationError extends KafkaError {
  /** The mirror the topics were to be added to. */
  readonly mirror: string;
  /** Each partition that would lose records: the first offset that would go and how many data records. */
  readonly partitions: readonly { topic: string; partition: number; fromOffset: bigint; records: bigint }[];

  constructor(
    mirror: string,
    partitions: readonly { topic: string; partition: number; fromOffset: bigint; records: bigint }[],
  ) {
    const list = partitions
      .map((p) => `${p.topic}-${p.partition}: ${p.records} record(s) from offset ${p.fromOffset}`)
      .join(", ");
    super(
      "UNSAFE_TRUNCATION",
      -1,
      false,
      `Adding to mirror '${mirror}' would truncate records written on this cluster since the failover (${list}). Nothing was changed. Copy those records elsewhere if they matter, then add again with --truncate-local-writes (truncateLocalWrites: true) to drop them and mirror from the source.`,
    );
    this.mirror = mirror;
    this.partitions = partitions;
  }
}

/**
 * The ClusterMirroring was closed: a wait still pending then (`whenCaughtUp`, `whenState`, `whenSynced`, a
 * command waiting for the coordinators to load) rejects at once with it, and so does one asked after.
 */
export class MirroringClosedError extends KafkaError {
  /** `detail`: what the interrupted call had already done, and what follows from it. */
  constructor(detail?: string) {
    super(
      "MIRRORING_CLOSED",
      -1,
      false,
      `the cluster's mirroring was closed (ClusterMirroring.close()): nothing more is waited for; start it again to go on${detail === undefined ? "" : `. ${detail}`}`,
    );
  }
}

/**
 * A wait of `whenCaughtUp` or `whenState` ran out (Kafka's REQUEST_TIMED_OUT, code 7, retriable): the
 * message says which partitions were not there yet. Nothing was changed; wait again, or look with describe.
 */
export class MirrorWaitTimeoutError extends KafkaError {
  constructor(timeoutMs: number, notYet: string) {
    super("REQUEST_TIMED_OUT", 7, true, `timed out after ${timeoutMs} ms: ${notYet}`);
  }
}

/**
 * An admin operation's change (add, remove, pause, resume, recover topics) was not recorded by the mirror
 * coordinators within `defaultApiTimeoutMs` (Kafka's admin client's `default.api.timeout.ms`, 60 s): their
 * `__mirror_state` writes do not commit (every disk there full, say). Kafka's TimeoutException: REQUEST_TIMED_OUT
 * (code 7), retriable. The change may still take effect (`stillPending` says what is already durable and
 * what finishes it), as an admin call Kafka timed out may still complete on the broker.
 */
export class MirrorCommandTimeoutError extends KafkaError {
  /** The mirror the operation was on. */
  readonly mirror: string;
  /** The operation: "add", "remove", "pause", "resume" or "recover". */
  readonly operation: string;
  /**
   * How long it waited for the records, from its first command (its bound, `defaultApiTimeoutMs` or a
   * promote's `timeoutMs`, including any wait for a moved coordinator to load and a second round of commands).
   */
  readonly timeoutMs: number;

  constructor(
    mirror: string,
    operation: string,
    topics: readonly string[],
    timeoutMs: number,
    waitedFor: string,
    stillPending: string,
  ) {
    super(
      "REQUEST_TIMED_OUT",
      7,
      true,
      `The ${operation} of [${topics.join(", ")}] in mirror '${mirror}' timed out after ${timeoutMs} ms (defaultApiTimeoutMs, Kafka's default.api.timeout.ms) waiting for the mirror coordinators to record it in __mirror_state: ${waitedFor}. It may still take effect: ${stillPending}. Check with --describe --mirror ${mirror} before acting on it; running the same command again is safe.`,
    );
    this.mirror = mirror;
    this.operation = operation;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * A promote's wait ran out (Kafka's REQUEST_TIMED_OUT, code 7, retriable). In the CATCH_UP phase nothing
 * was failed over: `partitions` are those that did not reach lag 0 against the source's high watermark,
 * with their lag; none when every partition had reached it and the time ran out while the source was asked
 * for its live high watermarks again, or (`queued`) when every partition had reached lag 0 but the
 * failover's turn behind the mirror's other commands came too late. In the STOP phase the failover had
 * begun: `partitions` are those not STOPPED yet.
 */
export class PromoteTimeoutError extends KafkaError {
  /** The mirror promoted. */
  readonly mirror: string;
  /** Which wait timed out. */
  readonly phase: "CATCH_UP" | "STOP";
  /** The partitions short of the target, with their lag (null when unknown) and state. */
  readonly partitions: readonly { topic: string; partition: number; lag: bigint | null; state: string }[];

  constructor(
    mirror: string,
    phase: "CATCH_UP" | "STOP",
    timeoutMs: number,
    partitions: readonly { topic: string; partition: number; lag: bigint | null; state: string }[],
    queued?: "QUEUED" | "SYNC",
  ) {
    const list = partitions
      .map(
        (p) =>
          `${p.topic}-${p.partition} ${phase === "CATCH_UP" ? `lag ${p.lag ?? "unknown"} ` : ""}(${p.state})`,
      )
      .join(", ");
    const message =
      queued === "QUEUED"
        ? `Promote of mirror '${mirror}' timed out after ${timeoutMs} ms: every partition had reached lag 0, but the failover waited behind other commands on the mirror (an add, pause, resume or remove still running) until the time was up. Nothing was failed over; the topics are still mirrored. Promote again once those commands are done, or with a larger --timeout-ms.`
        : queued === "SYNC"
          ? `Promote of mirror '${mirror}' timed out after ${timeoutMs} ms: every partition had reached lag 0, but the final metadata sync (topic configs, consumer group offsets) did not finish in time (the source did not answer). Nothing was failed over; the topics are still mirrored. Promote again with a larger --timeout-ms (the source must answer within it), or fail over anyway with --remove.`
          : phase === "CATCH_UP" && partitions.length === 0
            ? `Promote of mirror '${mirror}' timed out after ${timeoutMs} ms while it asked the source for its live high watermarks again (every partition had reached the ones asked before). Nothing was failed over; the topics are still mirrored. Promote again with a larger --timeout-ms (the source must answer within it), or fail over anyway with --remove.`
            : phase === "CATCH_UP"
              ? `Promote of mirror '${mirror}' timed out after ${timeoutMs} ms: ${partitions.length} partition(s) did not reach lag 0 against the source's high watermark: ${list}. Nothing was failed over; the topics are still mirrored. Check that every writer on the source has stopped and that those partitions are MIRRORING (--describe --mirror ${mirror}), then promote again (a larger --timeout-ms), or fail over anyway with --remove, leaving those records behind.`
              : `Promote of mirror '${mirror}' failed its topics over, but after ${timeoutMs} ms ${partitions.length} partition(s) are not STOPPED yet: ${list}. The failover goes on; follow it with --describe --mirror ${mirror} before sending writes to this cluster.`;
    super("REQUEST_TIMED_OUT", 7, true, message);
    this.mirror = mirror;
    this.phase = phase;
    this.partitions = partitions;
  }
}

/**
 * A promote whose caller gave up (its AbortSignal fired: a CLI's Ctrl-C, a node stopping) before the
 * failover began: nothing was failed over, the topics are still mirrored.
 */
export class PromoteCancelledError extends KafkaError {
  /** The mirror whose promote was cancelled. */
  readonly mirror: string;

  constructor(mirror: string) {
    super(
      "REQUEST_TIMED_OUT",
      7,
      true,
      `Promote of mirror '${mirror}' was cancelled before its failover began. Nothing was failed over; the topics are still mirrored. Promote again when ready.`,
    );
    this.mirror = mirror;
  }
}
