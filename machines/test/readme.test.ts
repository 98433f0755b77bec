import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { generateReadme } from "../src/index";

describe("machines/README.md", () => {
  it("holds the Mermaid diagrams generated from the current machines", () => {
    const file = join(dirname(fileURLToPath(import.meta.url)), "..", "README.md");
    const onDisk = readFileSync(file, "utf8");
    if (onDisk !== generateReadme()) {
      expect.fail("machines/README.md is out of date: run pnpm exec tsx machines/scripts/write-readme.ts");
    }
    expect(onDisk.match(/```mermaid\nstateDiagram-v2/g)?.length).toBe(3);
  });
});
