import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { checkPackage, createPackageFromTarballData } from "@arethetypeswrong/core";
import { build as esbuild } from "esbuild";
import { chromium } from "playwright-core";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectSuccess,
  pnpmCommand,
  ROOT,
  readmeExample,
  run,
  USER_PACKAGES,
  workspaceVersion,
} from "./consumer-project";

/**
 * The packages as a user gets them: built (scripts/build-packages.mjs), packed by `pnpm pack` (which
 * applies each package's `publishConfig`), checked by publint and arethetypeswrong, installed with plain
 * npm into a new project outside this workspace, and used there from JavaScript, from strict TypeScript,
 * from the installed bins and from a browser bundle.
 */

/** Debian's headless Chromium (`apt-get install chromium-headless-shell`); CHROMIUM_PATH overrides it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium-headless-shell";
/** A hang guard for the steps below on a loaded 2-core machine, not a speed requirement. */
const STEP_TIMEOUT_MS = 600_000;

const work = mkdtempSync(join(tmpdir(), "cluster-mirror-packaging-"));
const tarballDir = join(work, "tarballs");
const consumer = join(work, "consumer");
const tarballs = new Map<string, string>();
const timings: string[] = [];

async function timed<T>(what: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await step();
  timings.push(`${what} ${((performance.now() - started) / 1000).toFixed(1)}s`);
  return result;
}

/** The lines the README example prints that show it mirrored, failed over and failed back. */
function expectExampleOutput(lines: readonly string[]): void {
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
}

beforeAll(async () => {
  await timed("build", async () =>
    expectSuccess("build", await run(process.execPath, ["scripts/build-packages.mjs"], { cwd: ROOT })),
  );
  await timed("pack", async () => {
    const pnpm = pnpmCommand();
    const filters = USER_PACKAGES.flatMap((name) => ["--filter", name]);
    const r = expectSuccess(
      "pnpm pack",
      await run(
        pnpm.command,
        [...pnpm.args, "-r", ...filters, "pack", "--pack-destination", tarballDir, "--json"],
        {
          cwd: ROOT,
        },
      ),
    );
    const packed = JSON.parse(r.stdout) as { name: string; filename: string }[];
    for (const p of packed) tarballs.set(p.name, p.filename);
  });
  await timed("npm install", async () => {
    mkdirSync(consumer);
    // A new project, as a user starts one: the tarballs plus TypeScript and Node's types from the registry.
    const manifest = {
      name: "consumer",
      private: true,
      type: "module",
      dependencies: Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`])),
      devDependencies: {
        typescript: workspaceVersion("typescript"),
        "@types/node": workspaceVersion("@types/node"),
      },
    };
    writeFileSync(join(consumer, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    expectSuccess(
      "npm install",
      await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
        cwd: consumer,
      }),
    );
  });
}, STEP_TIMEOUT_MS);

afterAll(() => {
  console.log(`packaging steps: ${timings.join(", ")}`);
  rmSync(work, { recursive: true, force: true });
});

describe("packed packages", () => {
  it("packs every package meant for users", () => {
    expect([...tarballs.keys()].sort()).toEqual([...USER_PACKAGES].sort());
  });

  it(
    "every tarball passes publint (strict, suggestions included) and arethetypeswrong (ESM-only)",
    async () => {
      const problems: string[] = [];
      await timed("publint+attw", async () => {
        for (const [name, file] of tarballs) {
          const bytes = readFileSync(file);
          const tarball = bytes.buffer.slice(
            bytes.byteOffset,
            bytes.byteOffset + bytes.byteLength,
          ) as ArrayBuffer;
          const lint = await publint({ pack: { tarball }, level: "suggestion", strict: true });
          const pkgJson = lint.pkg ?? {};
          for (const m of lint.messages)
            problems.push(`${name}: publint ${m.type}: ${formatMessage(m, pkgJson)}`);
          const types = await checkPackage(createPackageFromTarballData(new Uint8Array(bytes)));
          if (types.types === false) {
            problems.push(`${name}: arethetypeswrong finds no types`);
            continue;
          }
          // The packages are ESM only (Node >= 20.19): `require` and node10 resolution are out of scope, as
          // with `attw --profile esm-only`.
          for (const p of types.problems) {
            if ("resolutionKind" in p && (p.resolutionKind === "node10" || p.resolutionKind === "node16-cjs"))
              continue;
            problems.push(`${name}: arethetypeswrong ${JSON.stringify(p)}`);
          }
        }
      });
      expect(problems).toEqual([]);
    },
    STEP_TIMEOUT_MS,
  );
});

describe("installed with npm into a project outside the workspace", () => {
  it(
    "runs the README's embedded example as plain JavaScript with node",
    async () => {
      writeFileSync(join(consumer, "example.mjs"), readmeExample());
      const r = await timed("node example", async () =>
        expectSuccess("node example.mjs", await run(process.execPath, ["example.mjs"], { cwd: consumer })),
      );
      expectExampleOutput(r.stdout.split("\n"));
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "type-checks the same example as a strict TypeScript consumer (nodenext, library checks on)",
    async () => {
      writeFileSync(join(consumer, "example.ts"), readmeExample());
      const tsconfig = {
        compilerOptions: {
          strict: true,
          target: "ES2022",
          lib: ["ES2023"],
          module: "NodeNext",
          moduleResolution: "NodeNext",
          types: ["node"],
          skipLibCheck: false,
          noEmit: true,
        },
        files: ["example.ts"],
      };
      writeFileSync(join(consumer, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
      await timed("tsc consumer", async () =>
        expectSuccess(
          "tsc",
          await run(
            process.execPath,
            [join(consumer, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"],
            {
              cwd: consumer,
            },
          ),
        ),
      );
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "puts kafka-mirrors and cluster-mirror on the project's PATH, running built JavaScript",
    async () => {
      const bin = join(consumer, "node_modules", ".bin");
      const help = expectSuccess(
        "kafka-mirrors --help",
        await run(join(bin, "kafka-mirrors"), ["--help"], { cwd: consumer }),
      );
      expect(help.stdout).toContain("Usage: kafka-mirrors");
      const demo = await timed("cluster-mirror demo", async () =>
        expectSuccess(
          "cluster-mirror demo",
          await run(join(bin, "cluster-mirror"), ["demo", "--data-dir", join(consumer, "demo-data")], {
            cwd: consumer,
          }),
        ),
      );
      expect(demo.stdout).toContain("Mirror dr-to-primary (orders, payments): source and destination agree");
      expect(demo.stdout).toMatch(/All checks passed in/);
      // Installed, nothing runs through tsx or from TypeScript sources.
      expect(existsSync(join(consumer, "node_modules", "tsx"))).toBe(false);
      expect(existsSync(join(consumer, "node_modules", "@cluster-mirror", "cli", "src"))).toBe(false);
    },
    STEP_TIMEOUT_MS,
  );
});

describe("in a browser", () => {
  it(
    "bundles the README example with esbuild (platform browser, no shims) and runs it in Chromium",
    async () => {
      writeFileSync(join(consumer, "example.mjs"), readmeExample());
      // The page reports the end of the example, or how it failed, on globalThis.
      writeFileSync(
        join(consumer, "browser-entry.mjs"),
        [
          'import { compressionFallbacks, crc32cImplementation, decodeRecordBatch, encodeRecordBatch } from "@cluster-mirror/protocol";',
          // The codecs a browser has: gzip, snappy and LZ4 in JavaScript; CRC-32C from its table.
          "const record = (value) => ({ attributes: 0, offsetDelta: 0, timestampDelta: 0n, key: null, value, headers: [] });",
          "globalThis.codecs = {",
          "  crc32c: crc32cImplementation,",
          "  values: [1, 2, 3].map((compression) =>",
          '    decodeRecordBatch(encodeRecordBatch({ compression, records: [record(Buffer.from("v".repeat(1000)))] }))',
          '      .records[0].value.toString("latin1").length),',
          "  fallbacks: compressionFallbacks().length,",
          "};",
          'import("./example.mjs").then(',
          '  () => { globalThis.exampleResult = "done"; },',
          '  (e) => { globalThis.exampleResult = "failed: " + (e?.stack ?? e); },',
          ");",
          "",
        ].join("\n"),
      );
      const bundled = await timed("esbuild", () =>
        esbuild({
          entryPoints: ["browser-entry.mjs"],
          absWorkingDir: consumer,
          bundle: true,
          platform: "browser",
          format: "esm",
          target: "es2022",
          write: false,
          logLevel: "silent",
        }),
      );
      const code = bundled.outputFiles[0]!.text;
      // Nothing of Node's is left for the browser to resolve.
      expect(code).not.toMatch(/from\s*["']node:|require\(["'](fs|path|os|zlib|module)["']\)/);

      if (!existsSync(CHROMIUM)) {
        throw new Error(
          `no Chromium at ${CHROMIUM}: install Debian's headless shell (apt-get install -y --no-install-recommends chromium-headless-shell) or set CHROMIUM_PATH`,
        );
      }
      const browser = await chromium.launch({ executablePath: CHROMIUM });
      try {
        const page = await browser.newPage();
        const lines: string[] = [];
        const errors: string[] = [];
        page.on("console", (m) => lines.push(...m.text().split("\n")));
        page.on("pageerror", (e) => errors.push(e.stack ?? e.message));
        await timed("chromium run", async () => {
          await page.addScriptTag({ content: code, type: "module" });
          await page.waitForFunction(
            () => (globalThis as { exampleResult?: string }).exampleResult !== undefined,
            undefined,
            {
              timeout: 120_000,
            },
          );
        });
        const result = await page.evaluate(() => (globalThis as { exampleResult?: string }).exampleResult);
        expect({ result, errors }).toEqual({ result: "done", errors: [] });
        expect(await page.evaluate(() => (globalThis as { codecs?: unknown }).codecs)).toEqual({
          crc32c: "js",
          values: [1000, 1000, 1000],
          fallbacks: 2,
        });
        expectExampleOutput(lines);
      } finally {
        await browser.close();
      }
    },
    STEP_TIMEOUT_MS,
  );
});

// Last, because it takes the native packages away from the installed project.
describe("installed on a platform without the native binaries", () => {
  it(
    "falls back to JavaScript CRC-32C, snappy and LZ4, says why, and still runs the example",
    async () => {
      // Every copy, wherever npm placed it: a platform whose binary is missing cannot load any of them.
      const natives = new Set(["aws-crt", "@node-rs/crc32", "snappy", "lz4-napi"]);
      const copies = (readdirSync(join(consumer, "node_modules"), { recursive: true }) as string[])
        .map((p) => p.split(sep).join("/"))
        .filter((p) => [...natives].some((n) => p === n || p.endsWith(`/node_modules/${n}`)));
      for (const p of copies) rmSync(join(consumer, "node_modules", p), { recursive: true, force: true });
      const removed = new Set(copies.map((p) => [...natives].find((n) => p.endsWith(n))));
      expect(removed).toEqual(natives);
      writeFileSync(
        join(consumer, "fallbacks.mjs"),
        [
          'import { createRequire } from "node:module";',
          'import { compress, compressionFallbacks, crc32cFallbackReason, crc32cImplementation, decompress } from "@cluster-mirror/protocol";',
          'const from = createRequire(import.meta.resolve("@cluster-mirror/protocol"));',
          "const found = (id) => { try { return from.resolve(id); } catch { return null; } };",
          'const stillThere = ["aws-crt/dist/native/checksums", "@node-rs/crc32", "snappy", "lz4-napi"].map(found).filter(Boolean);',
          'const data = Buffer.from("order-42 ".repeat(1000));',
          "const roundTrips = [2, 3].map((codec) => decompress(codec, compress(codec, data)).equals(data));",
          "console.log(JSON.stringify({ stillThere, crc32c: crc32cImplementation, crc32cFallbackReason, roundTrips, fallbacks: compressionFallbacks() }));",
          "",
        ].join("\n"),
      );
      const r = expectSuccess(
        "node fallbacks.mjs",
        await run(process.execPath, ["fallbacks.mjs"], { cwd: consumer }),
      );
      const report = JSON.parse(r.stdout) as {
        stillThere: string[];
        crc32c: string;
        crc32cFallbackReason: string;
        roundTrips: boolean[];
        fallbacks: string[];
      };
      expect(report.stillThere).toEqual([]);
      expect(report.crc32c).toBe("js");
      expect(report.crc32cFallbackReason).toMatch(/using the JavaScript table.*aws-crt: .*; node-rs: /);
      expect(report.roundTrips).toEqual([true, true]);
      expect(report.fallbacks).toHaveLength(2);
      expect(report.fallbacks[0]).toMatch(
        /^the snappy codec package 'snappy' could not be loaded .*JavaScript fallback/,
      );
      expect(report.fallbacks[1]).toMatch(
        /^the lz4 codec package 'lz4-napi' could not be loaded .*JavaScript fallback/,
      );
      const example = expectSuccess(
        "node example.mjs",
        await run(process.execPath, ["example.mjs"], { cwd: consumer }),
      );
      expectExampleOutput(example.stdout.split("\n"));
    },
    STEP_TIMEOUT_MS,
  );
});
