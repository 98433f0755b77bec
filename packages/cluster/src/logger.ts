/**
 * Where the cluster reports what an operator must know about (a log recovery that dropped data). Shaped
 * like pino's `logger.warn(fields, message)`, so a pino logger can be passed as it is.
 */
export interface ClusterLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** The default: the message on stderr, as Kafka's log4j WARN lines would be. */
export const CONSOLE_LOGGER: ClusterLogger = {
  warn: (_fields, message) => console.warn(message),
};
