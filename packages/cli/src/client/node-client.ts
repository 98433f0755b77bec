import { OperationError } from "../commands/cli-errors";
import type { ErrorBody } from "../node/http-errors";
import { toJson } from "../node/wire";
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

/** A small JSON client of the node's admin endpoint. */
export class NodeClient {
  private readonly base: string;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly timeoutMs = 60_000,
    /** Sent as `Authorization: Bearer`; the node refuses every request without its token. */
    private readonly token?: string,
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
      throw new NodeUnreachableError(
        `cannot reach the cluster-mirror node at ${this.endpoint.host}:${this.endpoint.port} (${why}). Start it (in the repository's root) with 'node packages/cli/bin/cluster-mirror.mjs node --data-dir ./data --port ${this.endpoint.port}', or fix --bootstrap-server.`,
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
      const err = (parsed as Partial<ErrorBody> | undefined)?.error;
      throw new NodeRequestError(
        err?.name ?? "UNKNOWN_SERVER_ERROR",
        err?.code ?? -1,
        err?.message ?? `the node answered HTTP ${response.status}`,
        response.status,
      );
    }
    return parsed as T;
  }
}
