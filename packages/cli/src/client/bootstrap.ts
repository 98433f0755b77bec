import { UsageError } from "../commands/cli-errors";

/** host and port of the node's admin endpoint. */
export interface Endpoint {
  host: string;
  port: number;
}

/**
 * Parses `--bootstrap-server` as Kafka's tools do: `host:port`, `:port` meaning 127.0.0.1, a
 * comma-separated list (the first entry is used). UsageError when it is not one.
 */
export function parseBootstrap(value: string): Endpoint {
  const first = value.split(",")[0]?.trim() ?? "";
  const match = /^(\[[^\]]+\]|[^:]*):(\d{1,5})$/.exec(first);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port < 1 || port > 65535) {
    throw new UsageError(
      `--bootstrap-server '${value}' is not host:port (e.g. ':9094' or 'localhost:9094'); pass the node's admin endpoint`,
    );
  }
  const host = match[1] === "" ? "127.0.0.1" : match[1]!.replace(/^\[|\]$/g, "");
  return { host, port };
}
