import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { crc32c, crc32cImplementation, crc32cJs } from "../src/index";
import { SEED } from "./helpers";

const VECTORS: [string, Buffer, number][] = [
  ["empty", Buffer.alloc(0), 0x00000000],
  ['"123456789"', Buffer.from("123456789"), 0xe3069283],
  ["32 zero bytes", Buffer.alloc(32, 0), 0x8a9136aa],
  ["32 0xFF bytes", Buffer.alloc(32, 0xff), 0x62a8ab43],
  // RFC 3720 (iSCSI) B.4: 32 bytes ascending and descending.
  ["32 ascending bytes", Buffer.from(Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e],
  ["32 descending bytes", Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i)), 0x113fdb5c],
];

describe("crc32c", () => {
  it("uses the fastest native implementation installed: aws-crt's aws-checksums, else @node-rs/crc32", () => {
    const require = createRequire(import.meta.url);
    const installed = (id: string) => {
      try {
        require.resolve(id);
        return true;
      } catch {
        return false;
      }
    };
    // aws-crt is an optional dependency: an install without it falls back, never to JS where node-rs is.
    const expected = installed("aws-crt/dist/native/checksums")
      ? "aws-crt"
      : installed("@node-rs/crc32")
        ? "node-rs"
        : "js";
    expect(crc32cImplementation).toBe(expected);
    expect(crc32cImplementation).not.toBe("js");
  });

  for (const [name, data, expected] of VECTORS) {
    it(`known vector: ${name}`, () => {
      expect(crc32c(data)).toBe(expected);
      expect(crc32cJs(data)).toBe(expected);
    });
  }

  it("accepts a Uint8Array view that is not a Buffer", () => {
    const backing = new Uint8Array(20);
    backing.set(Buffer.from("123456789"), 5);
    const view = backing.subarray(5, 14);
    expect(crc32c(view)).toBe(0xe3069283);
    expect(crc32cJs(view)).toBe(0xe3069283);
  });

  it("native and JS agree on arbitrary data and offsets", () => {
    // numRuns: 500
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.nat(16), (data, skip) => {
        const view = data.subarray(Math.min(skip, data.length));
        expect(crc32c(view)).toBe(crc32cJs(view));
        expect(crc32c(Buffer.from(view))).toBe(crc32cJs(view));
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it("the fallback binding, @node-rs/crc32, agrees with JS too", () => {
    const rs = createRequire(import.meta.url)("@node-rs/crc32") as { crc32c(d: Buffer): number };
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), (data) => {
        expect(rs.crc32c(Buffer.from(data)) >>> 0).toBe(crc32cJs(data));
      }),
      { seed: SEED, numRuns: 200 },
    );
  });
});
