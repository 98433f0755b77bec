import { OperationError } from "../commands/cli-errors";
import type { ErrorBody } from "../node/http-errors";
import { NODE_HEADER, toJson } from "../node/wire";
import type { Endpoint } from "./bootstrap";

/** The node could not be reached at all (nothing listens, or it hung up). */
export class NodeUnreachableError extends OperationError {}

/** The node answered with an error (`{error: {name, code, message}}`). */
export class NodeRequestError extends OperationError {
  constructor(
    readonly errorName: string,
    readonly code: number,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Connection errors that mean nothing listens at the address (or the name does not resolve). */
const NO_LISTENER = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
]);

/** A small JSON client of the node's admin endpoint. */
export class NodeClient {
  private readonly base: string;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly timeoutMs = 60_000,
    /** Sent as `Authorization: Bearer`; the node refuses every request without its token. */
    private readonly token?: string,
    /** Added to a timeout's message: the flag that sets the wait, if the command has one. */
    private readonly timeoutHint?: string,
  ) {
    const host = endpoint.host.includes(":") ? `[${endpoint.host}]` : endpoint.host;
    this.base = `http://${host}:${endpoint.port}`;
  }

  /** GET `path` with a query (undefined values left out). */
  get<T>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
    const qs = params.toString();
    return this.request<T>("GET", qs ? `${path}?${qs}` : path);
  }

  /** POST a JSON body. */
  post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  /** PATCH a JSON body. */
  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>("PATCH", path, body);
  }

  /** DELETE with a query. */
  delete<T>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
    const qs = params.toString();
    return this.request<T>("DELETE", qs ? `${path}?${qs}` : path);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
        },
        body: body === undefined ? undefined : toJson(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
      const where = `${this.endpoint.host}:${this.endpoint.port}`;
      if ((error as { name?: string }).name === "TimeoutError") {
        const advice =
          method === "GET"
            ? "a read changes nothing, so retrying is safe; if what listens there is not a cluster-mirror node (its admin endpoint is :9094 by default), fix --bootstrap-server"
            : "it may still be carrying it out: look with --describe or --list before repeating it";
        throw new NodeUnreachableError(
          `the node at ${where} did not answer ${method} ${path.split("?")[0]} within ${this.timeoutMs} ms${this.timeoutHint ? ` (${this.timeoutHint})` : ""}; ${advice}`,
        );
      }
      if (cause?.code !== undefined && !NO_LISTENER.has(cause.code)) {
        // Something listens there but does not speak HTTP: most likely a Kafka broker's port.
        throw new NodeUnreachableError(
          `${where} did not answer as an HTTP server (${why}); --bootstrap-server is the cluster-mirror node's admin endpoint (:9094 by default), not a Kafka broker's host:port`,
        );
      }
      throw new NodeUnreachableError(
        `cannot reach the cluster-mirror node at ${this.endpoint.host}:${this.endpoint.port} (${why}). Start it (in the repository's root) with 'node packages/cli/bin/cluster-mirror.mjs node --data-dir ./data --port ${this.endpoint.port}', or fix --bootstrap-server.`,
      );
    }
    if (response.headers.get(NODE_HEADER) === null) {
      // Another HTTP server (the node's metrics port, any web server): its answer is not the node's.
      throw new OperationError(
        `${this.endpoint.host}:${this.endpoint.port} answered HTTP ${response.status} to ${method} ${path.split("?")[0]}, but not as a cluster-mirror node; is --bootstrap-server the node's admin endpoint? (the adminPort of its node.started log line, 9094 by default; 9404 is its metrics port)`,
      );
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      throw new OperationError(
        `the node at ${this.endpoint.host}:${this.endpoint.port} answered ${response.status} with non-JSON text; is --bootstrap-server the node's admin port?`,
      );
    }
    if (!response.ok) {
      const err = (parsed as { error?: unknown } | undefined)?.error;
      if (!isErrorBody(err)) {
        throw new OperationError(
          `the node at ${this.endpoint.host}:${this.endpoint.port} answered HTTP ${response.status} to ${method} ${path.split("?")[0]} without an error message`,
        );
      }
      throw new NodeRequestError(err.name, err.code, err.message, response.status);
    }
    return parsed as T;
  }
}

/** Whether `value` is the `error` object of the node's error bodies ({@link ErrorBody}). */
function isErrorBody(value: unknown): value is ErrorBody["error"] {
  const e = value as Partial<ErrorBody["error"]> | null | undefined;
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.name === "string" &&
    typeof e.code === "number" &&
    typeof e.message === "string"
  );
}
