import { randomBytes } from "node:crypto";
import { gunzipSync as nodeGunzip, gzipSync as nodeGzip } from "node:zlib";
// The `buffer` package itself (what a browser build makes the global), not Node's built-in module.
import { Buffer as BufferPackage } from "buffer/index.js";
import { describe, expect, it } from "vitest";
import { crc32cFallbackReason, crc32cImplementation } from "../src/index";
import { addBase64Url, type BufferClass } from "../src/platform/buffer-global";
import { createRequire } from "../src/platform/module.browser";
import { gunzipSync, gzipSync } from "../src/platform/zlib.browser";

// The browser variants of protocol's platform seams, run here in Node against Node's own implementations.
describe("browser platform seams of @cluster-mirror/protocol", () => {
  it("gzip in plain JavaScript reads and writes what Node's zlib does", () => {
    const data = randomBytes(100_000);
    expect(Buffer.compare(nodeGunzip(gzipSync(data)), data)).toBe(0);
    expect(Buffer.compare(gunzipSync(nodeGzip(data)), data)).toBe(0);
    expect(Buffer.isBuffer(gunzipSync(nodeGzip(data)))).toBe(true);
  });

  it("gunzip refuses output above maxOutputLength, like zlib", () => {
    const bomb = nodeGzip(Buffer.alloc(1_000_000));
    expect(() => gunzipSync(bomb, { maxOutputLength: 999_999 })).toThrow(/larger than 999999 bytes/);
    expect(gunzipSync(bomb, { maxOutputLength: 1_000_000 }).length).toBe(1_000_000);
  });

  it("require of a native package says it cannot load in a browser build", () => {
    expect(() => createRequire("file:///x.js")("snappy")).toThrow(
      "'snappy' cannot load in a browser build: native and WASM packages load through Node.js's require",
    );
  });

  it("the buffer package gains Node's base64url encoding, both ways", () => {
    addBase64Url(BufferPackage as unknown as BufferClass);
    for (const size of [0, 1, 2, 3, 16, 31]) {
      const bytes = randomBytes(size);
      const encoded = BufferPackage.from(bytes).toString("base64url" as BufferEncoding);
      expect(encoded).toBe(bytes.toString("base64url"));
      expect(Buffer.compare(BufferPackage.from(encoded, "base64url" as BufferEncoding), bytes)).toBe(0);
    }
    // Other encodings are untouched.
    expect(BufferPackage.from("ff00", "hex").toString("base64")).toBe("/wA=");
  });

  it("crc32c explains a JavaScript fallback, and only then", () => {
    expect(crc32cFallbackReason === undefined).toBe(crc32cImplementation !== "js");
  });
});
