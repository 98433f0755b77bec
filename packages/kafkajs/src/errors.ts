import { KafkaError } from "@cluster-mirror/protocol";
import { kafkajsErrorCode } from "./kafkajs-internals";

/**
 * Kafka's names for codes kafkajs 2.2.4 knows under an older name or not at all (it stops at code 88), so
 * the engine's fetcher sees the names it classifies (NOT_LEADER_OR_FOLLOWER re-routes).
 */
const NAMES: Record<number, { name: string; retriable: boolean; message?: string }> = {
  // kafkajs calls it UNKNOWN, not retriable; Kafka's consumer and follower fetch again after it (an
  // unexpected exception on the broker, a tiered-storage read that failed), so the mirror retries too.
  [-1]: { name: "UNKNOWN_SERVER_ERROR", retriable: true },
  6: { name: "NOT_LEADER_OR_FOLLOWER", retriable: true },
  // kafkajs's GROUP_LOAD_IN_PROGRESS, GROUP_COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR_FOR_GROUP.
  14: { name: "COORDINATOR_LOAD_IN_PROGRESS", retriable: true },
  15: { name: "COORDINATOR_NOT_AVAILABLE", retriable: true },
  16: { name: "NOT_COORDINATOR", retriable: true },
  74: { name: "FENCED_LEADER_EPOCH", retriable: true },
  75: { name: "UNKNOWN_LEADER_EPOCH", retriable: true },
  100: {
    name: "UNKNOWN_TOPIC_ID",
    retriable: true,
    message:
      "the source has no topic with the mirrored topic's id: it was deleted, or deleted and created again; nothing of it is copied",
  },
  103: { name: "INCONSISTENT_TOPIC_ID", retriable: true },
  106: { name: "FETCH_SESSION_TOPIC_ID_ERROR", retriable: true },
};

/** Codes that mean "you may not": never retried, the broker's words kept. */
const AUTH_CODES = new Set([29, 30, 31, 58, 59]);

/** A Kafka error code from a source broker as a KafkaError with Kafka's name and retriable flag. */
export function kafkaErrorFromCode(code: number, context: string): KafkaError {
  const known = NAMES[code];
  const kjs = kafkajsErrorCode(code);
  const name = known?.name ?? kjs?.type ?? `UNKNOWN_ERROR_CODE_${code}`;
  const retriable = AUTH_CODES.has(code) ? false : (known?.retriable ?? kjs?.retriable ?? false);
  const message = known?.message ?? kjs?.message;
  const what = message ? `: ${message}` : "";
  return new KafkaError(
    name,
    code,
    retriable,
    `${context}: the source broker answered ${name} (${code})${what}`,
  );
}

/** The source broker is unreachable or the connection broke (Kafka's BROKER_NOT_AVAILABLE, retriable). */
export class SourceBrokerUnavailableError extends KafkaError {
  constructor(message: string, options?: ErrorOptions) {
    super("BROKER_NOT_AVAILABLE", 8, true, message, options);
  }
}

/** SASL authentication with the source failed: not retried, the broker's message kept (code 58). */
export class SourceAuthenticationError extends KafkaError {
  constructor(message: string, options?: ErrorOptions) {
    super("SASL_AUTHENTICATION_FAILED", 58, false, message, options);
  }
}

/** What kafkajs says when the connection, not the broker's answer, failed (its connection and request errors). */
const TRANSPORT_FAILURE =
  /Closed connection|Connection closed by the server|Connection error|Connection timeout|Failed to connect|Request .* timed out|Not connected|socket hang up|\b(ECONNRESET|ECONNREFUSED|ECONNABORTED|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)\b/;

/**
 * Any failure of a kafkajs call as a KafkaError: authentication failures are non-retriable with the
 * broker's message; connection failures and timeouts are BROKER_NOT_AVAILABLE; protocol errors keep their code.
 */
export function asSourceError(error: unknown, context: string): KafkaError {
  if (error instanceof KafkaError) return error;
  const e = error as { name?: string; message?: string; type?: string; code?: number };
  const message = `${context}: ${e?.message ?? String(error)}`;
  const name = e?.name ?? "";
  if (name === "KafkaJSSASLAuthenticationError" || /SASL|[Aa]uthenticat/.test(e?.message ?? "")) {
    // kafkajs's authenticators wrap whatever failed, the connection too ("SASL PLAIN authentication
    // failed: Closed connection"): a connection lost mid-handshake (a broker restarting, a re-authentication
    // in the middle of a fetch) is a disconnect, retried as Kafka's clients retry it.
    if (TRANSPORT_FAILURE.test(e?.message ?? ""))
      return new SourceBrokerUnavailableError(message, { cause: error });
    return new SourceAuthenticationError(message, { cause: error });
  }
  if (name === "KafkaJSProtocolError" && typeof e.code === "number") {
    const mapped = kafkaErrorFromCode(e.code, context);
    return new KafkaError(mapped.errorName, mapped.code, mapped.retriable, message, { cause: error });
  }
  return new SourceBrokerUnavailableError(message, { cause: error });
}
