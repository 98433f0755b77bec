import { Buffer as BufferImplementation } from "buffer";

/**
 * Every package of this project works on `Buffer` (Kafka's bytes, zero-copy views). Node.js has it as a
 * global; a browser does not, so a browser build takes the `buffer` package (the same API in plain
 * JavaScript) and makes it the global before any module that uses it runs. In Node.js the bare `buffer`
 * specifier is Node's own module, and the global is already there: this does nothing.
 *
 * The protocol package's entry imports this module first, and every other package imports the protocol
 * package, so users never add a shim of their own.
 */
const global = globalThis as { Buffer?: unknown };
if (global.Buffer === undefined) {
  addBase64Url(BufferImplementation as unknown as BufferClass);
  global.Buffer = BufferImplementation;
}

type Encoding = string | undefined;
export interface BufferClass {
  from(value: unknown, encodingOrOffset?: unknown, length?: number): unknown;
  prototype: { toString(encoding?: Encoding, start?: number, end?: number): string };
}

/**
 * The `buffer` package lacks Node's `base64url` encoding, which Kafka uses for topic and cluster ids
 * (`partition.metadata`, `__mirror_state`). Its base64 decoder already accepts the URL-safe alphabet and
 * missing padding, so decoding maps to it; encoding rewrites base64's output.
 */
export function addBase64Url(buffer: BufferClass): void {
  const encode = buffer.prototype.toString;
  buffer.prototype.toString = function (this: unknown, encoding?: Encoding, start?: number, end?: number) {
    if (encoding !== "base64url") return encode.call(this, encoding, start, end);
    return encode.call(this, "base64", start, end).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };
  const from = buffer.from;
  buffer.from = function (this: unknown, value: unknown, encodingOrOffset?: unknown, length?: number) {
    return from.call(this, value, encodingOrOffset === "base64url" ? "base64" : encodingOrOffset, length);
  };
}
