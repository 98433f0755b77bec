/** What `sseWriter` needs of a response: Node's `http.ServerResponse` has it. */
export interface SseResponse {
  write(chunk: string): boolean;
  /** Bytes written but not yet taken by the socket. */
  readonly writableLength: number;
  /** Closes the connection at once, dropping what waits unsent. */
  destroy(): void;
}

/** Unsent bytes a stream client may fall behind by before its stream is ended (8 MiB). */
export const SSE_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/**
 * Writes server-sent events to `res`; when more than `maxBufferedBytes` already wait unsent, it drops the
 * client instead of writing: destroys the connection (freeing what waits) and calls `overflow` (once). A
 * client that stopped reading (a stalled tab, a slow link) would otherwise hold every later event in the
 * node's memory for as long as it stays connected; merely ending its response would not free anything
 * either, as the end waits behind the unsent bytes. Dropping it loses nothing: EventSource reconnects by
 * itself and a new connection gets the full state first.
 */
export function sseWriter(
  res: SseResponse,
  overflow: () => void,
  maxBufferedBytes = SSE_MAX_BUFFERED_BYTES,
): (chunk: string) => void {
  let overflowed = false;
  return (chunk) => {
    if (overflowed) return;
    if (res.writableLength > maxBufferedBytes) {
      overflowed = true;
      res.destroy();
      overflow();
      return;
    }
    res.write(chunk);
  };
}
