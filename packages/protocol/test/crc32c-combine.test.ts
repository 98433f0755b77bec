import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { crc32c, crc32cCombine, crc32cOfRange } from "../src/index";
import { SEED } from "./helpers";

describe("CRC-32C without a pass over the data", () => {
  it("crc32cOfRange agrees with crc32c on the check vector and on views", () => {
    const bytes = Buffer.from("xx123456789yy");
    expect(crc32cOfRange(bytes, 2, 11)).toBe(0xe3069283);
    expect(crc32cOfRange(bytes, 3, 3)).toBe(crc32c(Buffer.alloc(0)));
  });

  it("crc32cCombine(crc(A), crc(B), |B|) is crc(A + B) for any A and B", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 3000 }), (a, b) => {
        const whole = crc32c(Buffer.concat([a, b]));
        expect(crc32cCombine(crc32c(a), crc32c(b), b.length)).toBe(whole);
        expect(crc32cOfRange(Buffer.concat([a, b]), 0, a.length + b.length)).toBe(whole);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("folds a run of parts left to right, whatever lengths repeat", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 12 }), (parts) => {
        let folded = crc32c(Buffer.alloc(0));
        for (const part of parts) folded = crc32cCombine(folded, crc32c(part), part.length);
        expect(folded).toBe(crc32c(Buffer.concat(parts)));
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("answers the same for a length used many times (its operator is then applied by table)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 1021, maxLength: 1021 }), { minLength: 40, maxLength: 60 }),
        (parts) => {
          let folded = crc32c(Buffer.alloc(0));
          for (const [i, part] of parts.entries()) {
            folded = crc32cCombine(folded, crc32c(part), part.length);
            expect(folded, `after ${i + 1} parts of 1021 bytes`).toBe(
              crc32c(Buffer.concat(parts.slice(0, i + 1))),
            );
          }
        },
      ),
      { seed: SEED, numRuns: 5 },
    );
  });
});
