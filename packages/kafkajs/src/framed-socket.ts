import * as net from "node:net";
import type * as tls from "node:tls";

/** kafkajs's `ISocketFactory` (its public `socketFactory` option): makes the socket of one connection. */
export type SocketFactory = (args: {
  host: string;
  port: number;
  ssl: tls.ConnectionOptions | null | undefined;
  onConnect: () => void;
}) => net.Socket;

/** How long an idle connection waits between TCP keep-alive probes (kafkajs's own value). */
const KEEP_ALIVE_DELAY_MS = 60_000;
/** The first size of a connection's staging buffer; it grows to the largest response seen. */
const INITIAL_STAGING_BYTES = 64 << 10;
/** A Kafka response larger than this is a broken stream, not a response (Kafka's own limit is 2 GiB - 1). */
const MAX_FRAME_BYTES = 0x7fffffff - 4;

/** The ArrayBuffers of every staging buffer: memory that is written again by the next response. */
const stagingMemory = new WeakSet<ArrayBufferLike>();

/**
 * True when `bytes` lies in a framed socket's staging buffer, which the next response overwrites: whoever
 * keeps such bytes past the current call must copy them first.
 */
export function isReusedReadMemory(bytes: Uint8Array): boolean {
  return stagingMemory.has(bytes.buffer);
}

/**
 * Cuts a Kafka byte stream into whole size-prefixed frames (`int32 size` then `size` bytes). The socket
 * reads straight into the framer's memory (`readBuffer`, then `wrote`), so no byte is copied on the way
 * in: each frame is gathered in a staging buffer the framer keeps and reuses (grown to the largest frame)
 * and handed on as a view of it once complete; the view is valid only during `onFrame` (later reads
 * overwrite it). The first frame is gathered in memory of its own instead and handed on to keep (see
 * `framedSocketFactory`). `push` feeds bytes read elsewhere (one copy).
 */
export class ResponseFramer {
  /** Where the current frame is gathered: the first frame's own memory, then the staging buffer. */
  private target: Buffer;
  /** Bytes gathered in `target` (the current frame's, its size prefix included, and any after it). */
  private fill = 0;
  /** The current frame's length with its size prefix, once the prefix is complete. */
  private frameLength = -1;
  private first = true;

  constructor(private readonly onFrame: (frame: Buffer) => void) {
    this.target = Buffer.allocUnsafeSlow(INITIAL_STAGING_BYTES);
  }

  /**
   * Where the next read must write: after the bytes gathered, up to the end of the current frame when its
   * size is known (so a read never runs into the next frame's memory needlessly).
   */
  readBuffer(): Buffer {
    return this.frameLength < 0
      ? this.target.subarray(this.fill)
      : this.target.subarray(this.fill, this.frameLength);
  }

  /** `length` bytes were written at the start of the last `readBuffer()`: hands on the frames completed. */
  wrote(length: number): void {
    this.fill += length;
    let start = 0;
    for (;;) {
      if (this.frameLength < 0) {
        if (this.fill - start < 4) break;
        const size = this.target.readInt32BE(start);
        if (size < 0 || size > MAX_FRAME_BYTES)
          throw new RangeError(`the broker sent a response of ${size} bytes: the stream is broken`);
        this.frameLength = 4 + size;
        if (start + this.frameLength > this.target.length) {
          // Too big for the buffer: gather it in a larger one (the first frame in memory sized to it).
          const size = this.first ? this.frameLength : Math.max(this.frameLength, this.target.length * 2);
          this.moveTo(this.first ? Buffer.allocUnsafeSlow(size) : this.allocateStaging(size), start);
          start = 0;
        }
      }
      if (this.fill - start < this.frameLength) break;
      const frame = this.target.subarray(start, start + this.frameLength);
      start += this.frameLength;
      this.frameLength = -1;
      if (this.first) {
        // kafkajs keeps a lone first chunk as it is: the first frame's memory is never written again.
        this.first = false;
        this.moveTo(this.allocateStaging(Math.max(INITIAL_STAGING_BYTES, this.fill - start)), start);
        start = 0;
      }
      this.onFrame(frame);
    }
    if (start > 0) {
      // What follows the frames handed on (a read that ran past them) moves to the buffer's start.
      this.target.copyWithin(0, start, this.fill);
      this.fill -= start;
    }
  }

  /** Takes `length` bytes of `chunk` (which may be reused once this returns), copying them in. */
  push(chunk: Uint8Array, length: number): void {
    let at = 0;
    while (at < length) {
      const into = this.readBuffer();
      const n = Math.min(length - at, into.length);
      into.set(chunk.subarray(at, at + n));
      at += n;
      this.wrote(n);
    }
  }

  /** Makes `buffer` the target, with the gathered bytes from `start` on moved to its beginning. */
  private moveTo(buffer: Buffer, start: number): void {
    this.target.copy(buffer, 0, start, this.fill);
    this.fill -= start;
    this.target = buffer;
  }

  private allocateStaging(size: number): Buffer {
    const b = Buffer.allocUnsafeSlow(size);
    stagingMemory.add(b.buffer);
    return b;
  }
}

/**
 * A kafkajs socket factory whose plaintext sockets emit one `data` event per whole Kafka response. Each
 * read syscall writes straight into the framer's memory (Node's `onread` with a buffer function, see
 * `ResponseFramer`), so a response's bytes are copied once in JavaScript, by kafkajs. With kafkajs's
 * default sockets every read is a fresh 64 KiB buffer, garbage as soon as kafkajs has joined a response's
 * reads with `Buffer.concat`; here kafkajs's join is the only allocation a response makes, and it is the
 * buffer the destination log then keeps.
 *
 * kafkajs's connection joins the chunks it holds whenever there are two or more (its buffered remainder,
 * empty after the first response, plus the new frame), so from the second frame on it copies each frame
 * out of the staging buffer during the `data` event. The first frame on a socket is read into memory of
 * its own, never written again, since kafkajs keeps a lone first chunk as it is (on a fetch connection
 * that is the first fetch response: no copy at all). What a connection hands to our own decoders is
 * checked again (`isReusedReadMemory`) and copied if it still lies in staging memory, so no kept byte can
 * be overwritten whatever kafkajs does. TLS and SASL connections use kafkajs's own sockets (SASL hands
 * raw reads to its authenticators).
 */
export function framedSocketFactory(fallback: SocketFactory): SocketFactory {
  return (args) => {
    if (args.ssl) return fallback(args);
    let socket: net.Socket | undefined;
    const framer = new ResponseFramer((frame) => socket?.emit("data", frame));
    socket = net.connect(
      {
        host: args.host,
        port: args.port,
        onread: {
          // Each read lands where the framer gathers the current frame: no copy on the way in.
          buffer: () => framer.readBuffer(),
          callback: (length: number) => {
            try {
              framer.wrote(length);
            } catch (error) {
              socket?.destroy(error as Error);
              return false;
            }
            return true;
          },
        },
      },
      args.onConnect,
    );
    socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS);
    return socket;
  };
}
