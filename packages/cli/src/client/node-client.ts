import * as diagnostics from "node:diagnostics_channel";
import type { Socket } from "node:net";
import { OperationError, UsageError } from "../commands/cli-errors";
import type { ErrorBody } from "../node/http-errors";
import { NDJSON, NODE_HEADER, toJson } from "../node/wire";
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

/** Connection errors that mean the connection broke after it was made: the node may have stopped. */
const DROPPED = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE", "ECONNABORTED"]);

/**
 * The ports WHATWG fetch (undici, as bundled with Node.js 20.20) refuses to connect to ("bad ports", kept
 * for other protocols): a node listening on one cannot be reached by any CLI, so `cluster-mirror node`
 * refuses them and the client says so instead of advising to start the node there.
 */
export const FETCH_BAD_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/**
 * The diagnostics channel undici publishes each new connection on. Node 20's fetch never settles when the
 * peer closes a connection while undici is still setting it up (the first connection of a process, while
 * its HTTP parser loads): the request waits on a dead socket. Seeing that socket already closed here is the
 * only sign of it.
 */
const CONNECTED_CHANNEL = "undici:client:connected";

/** Why the client aborted a request: its deadline, or a connection closed before it could be used. */
const TIMED_OUT = Symbol("timed out");
const CLOSED_AT_CONNECT = Symbol("closed at connect");

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

  private request<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.exchange(path, async (signal, where) => {
      let response: Response;
      let text: string;
      try {
        response = await fetch(new URL(`${this.base}${path}`), {
          method,
          headers: {
            ...(body === undefined ? {} : { "content-type": "application/json" }),
            ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
          },
          body: body === undefined ? undefined : toJson(body),
          signal,
        });
        text = await response.text();
      } catch (error) {
        throw this.failure(error, method, path.split("?")[0]!, where);
      }
      return this.answer<T>(response, text, method, path);
    });
  }

  /**
   * Runs `send` under the client's deadline (`refresh` restarts it) and aborts it, too, when its first
   * connection is found closed as it is made (see CONNECTED_CHANNEL) or when `stop` fires.
   */
  private async exchange<T>(
    path: string,
    send: (signal: AbortSignal, where: string, refresh: () => void) => Promise<T>,
    stop?: AbortSignal,
  ): Promise<T> {
    const where = `${this.endpoint.host}:${this.endpoint.port}`;
    if (FETCH_BAD_PORTS.has(this.endpoint.port)) throw badPortError(where, this.endpoint.port);
    const host = new URL(`${this.base}${path}`).host;
    // A ref'd timer, not AbortSignal.timeout: that one's timer does not keep the process alive, so a fetch
    // that never settles ended a CLI silently with exit code 13 (an unsettled top-level await).
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(TIMED_OUT), this.timeoutMs);
    const onConnected = (message: unknown) => {
      const { connectParams, socket } = message as { connectParams?: { host?: string }; socket?: Socket };
      if (connectParams?.host === host && socket?.closed === true) controller.abort(CLOSED_AT_CONNECT);
    };
    const onStop = () => controller.abort(stop?.reason);
    stop?.addEventListener("abort", onStop, { once: true });
    diagnostics.subscribe(CONNECTED_CHANNEL, onConnected);
    try {
      return await send(controller.signal, where, () => timer.refresh());
    } finally {
      clearTimeout(timer);
      diagnostics.unsubscribe(CONNECTED_CHANNEL, onConnected);
      stop?.removeEventListener("abort", onStop);
    }
  }

  /**
   * POST a JSON body, asking for an NDJSON answer: `onLine` gets each line, parsed, as it arrives (a node
   * that answers plain JSON instead: that one value); an `{error}` line rejects as the node's error. The
   * deadline is an idle one: each chunk that arrives restarts it. `stop` aborts the request.
   */
  postLines(
    path: string,
    body: unknown,
    onLine: (value: unknown) => void,
    stop?: AbortSignal,
  ): Promise<void> {
    return this.exchange(
      path,
      async (signal, where, refresh) => {
        let response: Response;
        try {
          response = await fetch(new URL(`${this.base}${path}`), {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: `${NDJSON}, application/json`,
              ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
            },
            body: toJson(body),
            signal,
          });
        } catch (error) {
          throw this.failure(error, "POST", path, where);
        }
        const streamed =
          response.ok &&
          response.headers.get(NODE_HEADER) !== null &&
          (response.headers.get("content-type") ?? "").startsWith(NDJSON);
        if (!streamed || !response.body) {
          let text: string;
          try {
            text = await response.text();
          } catch (error) {
            throw this.failure(error, "POST", path, where);
          }
          onLine(this.answer(response, text, "POST", path));
          return;
        }
        const decoder = new TextDecoder();
        let pending = "";
        try {
          const reader = response.body.getReader();
          for (let read = await reader.read(); !read.done; read = await reader.read()) {
            refresh();
            pending += decoder.decode(read.value, { stream: true });
            const lines = pending.split("\n");
            pending = lines.pop() ?? "";
            for (const line of lines) if (line !== "") onLine(this.streamed(line));
          }
        } catch (error) {
          if (error instanceof OperationError) throw error;
          throw this.failure(error, "POST", path, where);
        }
      },
      stop,
    );
  }

  /** A line of an NDJSON answer, parsed; NodeRequestError for an `{error}` line. */
  private streamed(line: string): unknown {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new OperationError(
        `the node at ${this.endpoint.host}:${this.endpoint.port} sent a line that is not JSON in its answer: ${line.slice(0, 200)}`,
      );
    }
    const { error, status } = (parsed ?? {}) as { error?: unknown; status?: unknown };
    if (isErrorBody(error)) {
      throw new NodeRequestError(
        error.name,
        error.code,
        error.message,
        typeof status === "number" ? status : 500,
      );
    }
    return parsed;
  }

  /** The error to throw for a request that got no (complete) answer. */
  private failure(error: unknown, method: string, route: string, where: string): Error {
    if (error === CLOSED_AT_CONNECT) {
      return new NodeUnreachableError(
        `${where} accepted the connection and closed it before answering ${method} ${route} (the request was not sent); if it is the cluster-mirror node, it may be stopping or restarting: check it and retry; otherwise fix --bootstrap-server (the node's admin endpoint, :9094 by default)`,
      );
    }
    if (error === TIMED_OUT) {
      const advice =
        method === "GET"
          ? "a read changes nothing, so retrying is safe; if what listens there is not a cluster-mirror node (its admin endpoint is :9094 by default), fix --bootstrap-server"
          : "it may still be carrying it out: look with --describe or --list before repeating it";
      return new NodeUnreachableError(
        `the node at ${where} did not answer ${method} ${route} within ${this.timeoutMs} ms${this.timeoutHint ? ` (${this.timeoutHint})` : ""}; ${advice}`,
      );
    }
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
    if (cause?.message === "bad port") return badPortError(where, this.endpoint.port);
    if (cause?.code !== undefined && DROPPED.has(cause.code)) {
      const reason = cause.code === "UND_ERR_SOCKET" && cause.message ? cause.message : cause.code;
      const advice =
        method === "GET"
          ? "the node may have stopped: check it and retry"
          : "the node may have stopped, and may have carried out the request: check it and look with --describe or --list before repeating it";
      return new NodeUnreachableError(
        `the connection to the node at ${where} was dropped before it answered ${method} ${route} (${reason}); ${advice}. If ${where} is not the node's admin endpoint (:9094 by default) but, say, a Kafka broker's, fix --bootstrap-server`,
      );
    }
    if (cause?.code !== undefined && !NO_LISTENER.has(cause.code)) {
      // Something listens there but does not speak HTTP: most likely a Kafka broker's port.
      return new NodeUnreachableError(
        `${where} did not answer as an HTTP server (${why}); --bootstrap-server is the cluster-mirror node's admin endpoint (:9094 by default), not a Kafka broker's host:port`,
      );
    }
    return new NodeUnreachableError(
      `cannot reach the cluster-mirror node at ${where} (${why}). Start it (in the repository's root) with 'node packages/cli/bin/cluster-mirror.mjs node --data-dir ./data --port ${this.endpoint.port}', or fix --bootstrap-server.`,
    );
  }

  /** The parsed body of the node's answer; the error it reports, or what is wrong with the answer. */
  private answer<T>(response: Response, text: string, method: string, path: string): T {
    if (response.headers.get(NODE_HEADER) === null) {
      // Another HTTP server (the node's metrics port, any web server): its answer is not the node's.
      throw new OperationError(
        `${this.endpoint.host}:${this.endpoint.port} answered HTTP ${response.status} to ${method} ${path.split("?")[0]}, but not as a cluster-mirror node; is --bootstrap-server the node's admin endpoint? (the adminPort of its node.started log line, 9094 by default; 9404 is its metrics port)`,
      );
    }
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

/** A node on a port fetch refuses cannot be reached: say so, not "start it there". */
function badPortError(where: string, port: number): UsageError {
  return new UsageError(
    `cannot connect to ${where}: port ${port} is one the CLIs' HTTP client (fetch) refuses to use (a WHATWG "bad port", reserved for other protocols), so no CLI can reach a node on it. Restart the node with another --port (e.g. the default 9094) and pass that port to --bootstrap-server.`,
  );
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
