import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { cliVersion } from "../src/commands/cli-version";
import { BIN, killAll, run, tempDir } from "./cli-harness";

const pkg = JSON.parse(
  fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "package.json"), "utf8"),
) as { version: string };

describe("--version", () => {
  afterEach(killAll);

  it("both programs print the package's version and exit 0", async () => {
    for (const [bin, flag] of [
      [BIN.clusterMirror, "--version"],
      [BIN.kafkaMirrors, "-V"],
    ] as const) {
      const r = await run(bin, [flag]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(pkg.version);
    }
  });

  it("finds the package from a module at any depth below it, and says unknown outside it", () => {
    const root = tempDir("cli-version-");
    const installed = path.join(root, "node_modules", "@cluster-mirror", "cli");
    fs.mkdirSync(path.join(installed, "dist", "bin"), { recursive: true });
    fs.writeFileSync(
      path.join(installed, "package.json"),
      '{"name":"@cluster-mirror/cli","version":"9.8.7"}',
    );
    // Another package's manifest on the way up is not ours.
    fs.writeFileSync(path.join(root, "package.json"), '{"name":"my-app","version":"1.0.0"}');
    expect(cliVersion(path.join(installed, "dist", "chunk-abc.js"))).toBe("9.8.7");
    expect(cliVersion(path.join(installed, "dist", "bin", "kafka-mirrors.js"))).toBe("9.8.7");
    expect(cliVersion(path.join(root, "lib", "x.js"))).toBe("unknown");
  });
});
