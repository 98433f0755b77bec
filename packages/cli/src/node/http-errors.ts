import { KafkaError } from "@cluster-mirror/protocol";
import { RequestCutShortError } from "./request-signal";

/** The JSON body of every failed request: `{error: {name, code, message}}`. */
export interface ErrorBody {
  error: {
    /** Kafka's error name (UNKNOWN_MIRROR, INVALID_CONFIG, ...) or INVALID_REQUEST / INTERNAL_ERROR. */
    name: string;
    /** Kafka's error code, -1 when Kafka has none. */
    code: number;
    message: string;
  };
}

/** A request the node cannot act on because a field is missing or malformed (HTTP 400). */
export class BadRequestError extends KafkaError {
  constructor(message: string) {
    super("INVALID_REQUEST", 42, false, message);
  }
}

const NOT_FOUND = new Set(["UNKNOWN_MIRROR", "UNKNOWN_CLUSTER", "UNKNOWN_TOPIC_OR_PARTITION"]);
const CONFLICT = new Set([
  "INVALID_MIRROR_STATE",
  "MIRROR_ALREADY_EXISTS",
  "TOPIC_ALREADY_EXISTS",
  "MIRROR_LOOP",
  "UNSAFE_TRUNCATION",
]);
/** Not authenticated (401), authenticated but not allowed (403), a Host the node does not answer to (421). */
const AUTH_STATUS: Record<string, number> = {
  SASL_AUTHENTICATION_FAILED: 401,
  TOPIC_AUTHORIZATION_FAILED: 403,
  GROUP_AUTHORIZATION_FAILED: 403,
  CLUSTER_AUTHORIZATION_FAILED: 403,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 403,
  MISDIRECTED_REQUEST: 421,
};
const UNAVAILABLE = new Set([
  "NETWORK_EXCEPTION",
  "LEADER_NOT_AVAILABLE",
  "NOT_LEADER_OR_FOLLOWER",
  "MIRROR_FAILOVER_IN_PROGRESS",
]);
/**
 * Retriable refusals of the node's own making, nothing wrong with the request: its mirror coordinators
 * not loaded yet (503), or what it waited for not done within the call's bound (504; the change may still
 * take effect, as after Kafka's TimeoutException). A 400 would tell a client not to send it again.
 */
const TRY_AGAIN: Record<string, number> = {
  COORDINATOR_LOAD_IN_PROGRESS: 503,
  COORDINATOR_NOT_AVAILABLE: 503,
  REQUEST_TIMED_OUT: 504,
};

/**
 * HTTP status and body for an error: typed (Kafka) errors get a 4xx (401 no or a wrong token, 403 not
 * authorized, 404 unknown, 409 state conflict, 421 a Host the node does not answer to, 424 a dependency
 * such as the source is unavailable, 503 a long request cut short or the mirror coordinators not loaded,
 * 504 a wait of the node's that ran out (REQUEST_TIMED_OUT), 400 the rest); anything else is a 500.
 */
export function errorResponse(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof KafkaError) {
    const status =
      error instanceof RequestCutShortError
        ? 503
        : (AUTH_STATUS[error.errorName] ??
          TRY_AGAIN[error.errorName] ??
          (NOT_FOUND.has(error.errorName)
            ? 404
            : CONFLICT.has(error.errorName)
              ? 409
              : UNAVAILABLE.has(error.errorName)
                ? 424
                : 400));
    return { status, body: { error: { name: error.errorName, code: error.code, message: error.message } } };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, body: { error: { name: "INTERNAL_ERROR", code: -1, message } } };
}
