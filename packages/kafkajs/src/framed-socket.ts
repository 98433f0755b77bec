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
/** The socket's one read buffer: each read syscall takes up to this many bytes. */
const READ_BUFFER_BYTES = 256 << 10;
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
 * Cuts a Kafka byte stream into whole size-prefixed frames (`int32 size` then `size` bytes). Each frame is
 * gathered in a staging buffer the framer keeps and reuses (grown to the largest frame), and handed on as
 * a view of it once complete; the view is valid only during `onFrame` (the next frame overwrites it).
 * The first frame is handed on as a copy instead (see `framedSocketFactory`).
 */
export class ResponseFramer {
  private staging: Buffer;
  /** Bytes of the current frame gathered so far (its size prefix included). */
  private fill = 0;
  /** The current frame's length with its size prefix, once the prefix is complete. */
  private frameLength = -1;
  private first = true;

  constructor(private readonly onFrame: (frame: Buffer) => void) {
    this.staging = this.allocate(INITIAL_STAGING_BYTES);
  }

  /** Takes `length` bytes of `chunk` (which may be reused once this returns). */
  push(chunk: Uint8Array, length: number): void {
    let at = 0;
    while (at < length) {
      if (this.frameLength < 0) {
        while (this.fill < 4 && at < length) this.staging[this.fill++] = chunk[at++]!;
        if (this.fill < 4) return;
        const size = this.staging.readInt32BE(0);
        if (size < 0 || size > MAX_FRAME_BYTES)
          throw new RangeError(`the broker sent a response of ${size} bytes: the stream is broken`);
        this.frameLength = 4 + size;
        if (this.frameLength > this.staging.length) {
          const grown = this.allocate(Math.max(this.frameLength, this.staging.length * 2));
          this.staging.copy(grown, 0, 0, 4);
          this.staging = grown;
        }
      }
      const n = Math.min(length - at, this.frameLength - this.fill);
      this.staging.set(chunk.subarray(at, at + n), this.fill);
      this.fill += n;
      at += n;
      if (this.fill === this.frameLength) {
        const view = this.staging.subarray(0, this.frameLength);
        this.fill = 0;
        this.frameLength = -1;
        const frame = this.first ? Buffer.from(view) : view;
        this.first = false;
        this.onFrame(frame);
      }
    }
  }

  private allocate(size: number): Buffer {
    const b = Buffer.allocUnsafeSlow(size);
    stagingMemory.add(b.buffer);
    return b;
  }
}

/**
 * A kafkajs socket factory whose plaintext sockets emit one `data` event per whole Kafka response, read
 * through one reused read buffer (Node's `onread`) into a reused staging buffer (see `ResponseFramer`).
 * With kafkajs's default sockets every read is a fresh 64 KiB buffer, garbage as soon as kafkajs has
 * joined a response's reads with `Buffer.concat`; here kafkajs's join is the only allocation a response
 * makes, and it is the buffer the destination log then keeps.
 *
 * kafkajs's connection joins the chunks it holds whenever there are two or more (its buffered remainder,
 * empty after the first response, plus the new frame), so from the second frame on it copies each frame
 * out of the staging buffer during the `data` event. The first frame on a socket is emitted as a copy,
 * since kafkajs keeps a lone first chunk as it is. What a connection hands to our own decoders is checked
 * again (`isReusedReadMemory`) and copied if it still lies in staging memory, so no kept byte can be
 * overwritten whatever kafkajs does. TLS and SASL connections use kafkajs's own sockets (SASL hands raw
 * reads to its authenticators).
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
          buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
          callback: (length: number, buffer: Uint8Array) => {
            try {
              framer.push(buffer, length);
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
