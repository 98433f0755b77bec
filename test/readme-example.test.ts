import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const readme = readFileSync(join(here, "..", "README.md"), "utf8");

/** The README's embedded-library example, exactly as shown. */
function example(): string {
  const m = /<!-- embedded-example:start -->\n```ts\n([\s\S]*?)```\n<!-- embedded-example:end -->/.exec(
    readme,
  );
  if (!m?.[1]) throw new Error("README.md has no embedded-example block between its markers");
  return m[1];
}

const dir = mkdtempSync(join(here, ".readme-example-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("README embedded-library example", () => {
  it("runs exactly as shown: mirror, describe, fail over, write on the new primary, fail back", async () => {
    const file = join(dir, "example.ts");
    writeFileSync(file, example());
    // No deadline of its own: the run ends when the example does (its own waits are the library's), and the
    // test's timeout below is only the hang guard, generous for a loaded machine.
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", file], { cwd: here });
    const lines = stdout.split("\n");
    expect(lines).toContain("Added 1 topic(s) to mirror dr: [orders]");
    expect(lines).toContain("Removed 1 topic(s) from mirror dr: [orders]");
    expect(lines).toContain("Added 1 topic(s) to mirror back: [orders]");
    const rows = lines.filter((l) => /^(dr|back)\s+orders\s+\d/.test(l));
    expect(rows).toHaveLength(4);
    for (const row of rows) {
      const [, , , source, destination, lag, state] = row.trim().split(/\s+/);
      expect(state).toBe("MIRRORING");
      expect(lag).toBe("0");
      expect(destination).toBe(source);
    }
  }, 300_000);
});
