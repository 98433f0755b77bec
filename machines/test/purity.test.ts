import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "src");

describe("machines/src has no hidden clock, randomness or I/O", () => {
  it("never reads Date.now, new Date, Math.random, randomUUID, hrtime, performance, timers, `after` delays or node: modules", () => {
    const files = readdirSync(SRC).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      // Comments may explain why these are banned; only code counts.
      const text = readFileSync(join(SRC, f), "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/\/\/.*$/gm, "");
      for (const banned of [
        /Date\.now/,
        /new Date\b/,
        /Math\.random/,
        /performance\./,
        /setTimeout|setInterval/,
        /randomUUID/,
        /process\.hrtime/,
        /\bafter:/,
        /from "node:/,
      ]) {
        expect(text, `${f} uses ${banned}`).not.toMatch(banned);
      }
    }
  });
});
