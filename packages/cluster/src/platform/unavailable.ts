import { KafkaError } from "@cluster-mirror/protocol";

/**
 * A stand-in for a Node.js file-system function in a browser build: calling it throws, non-retriable,
 * saying what needs Node.js and what to do instead. Only file storage calls these, so a browser program
 * that keeps its logs in memory never does.
 */
export function unavailable(name: string): (...args: unknown[]) => never {
  return () => {
    throw new KafkaError(
      "KAFKA_STORAGE_ERROR",
      56,
      false,
      `${name} is not available in a browser build: file storage (a cluster's dataDir, FileLogStorage) needs Node.js; leave dataDir unset to keep the logs in memory`,
    );
  };
}
