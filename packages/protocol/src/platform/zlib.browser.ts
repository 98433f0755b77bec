import { gunzipSync as fflateGunzip, gzipSync as fflateGzip } from "fflate";

/**
 * Browser build of the gzip codec: `fflate`, plain JavaScript, writing and reading the same gzip format as
 * Node's zlib. Same signatures as the `node:zlib` functions `compression.ts` uses.
 */
export function gzipSync(data: Uint8Array): Buffer {
  return toBuffer(fflateGzip(data));
}

/** Gunzips `data`; `maxOutputLength` guards against corrupt sizes and decompression bombs, as zlib's does. */
export function gunzipSync(data: Uint8Array, options: { maxOutputLength?: number } = {}): Buffer {
  const out = fflateGunzip(data);
  if (options.maxOutputLength !== undefined && out.byteLength > options.maxOutputLength) {
    throw new RangeError(`gzip output is larger than ${options.maxOutputLength} bytes`);
  }
  return toBuffer(out);
}

function toBuffer(out: Uint8Array): Buffer {
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}
