import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { VISUALIZER_DIST_DIR } from "../../src/paths";
import { type ScenarioResult, scenarioHash } from "../../src/scenario/scenario";
import { serveDir } from "./static-server";

const ARTIFACTS = new URL("../../artifacts/", import.meta.url).pathname;
const SCENARIO = new URL("../../scenarios/active-passive-failover-failback.json", import.meta.url).pathname;

let browser: Browser;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: inject("chromiumPath") });
  ({ baseUrl, server } = await serveDir(VISUALIZER_DIST_DIR));
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

describe("the scenario runner (no node: static files only)", () => {
  it("reproduces a recorded run from its URL: same final states and offsets as in Node", async () => {
    const { spec, expected } = JSON.parse(readFileSync(SCENARIO, "utf8")) as {
      spec: Parameters<typeof scenarioHash>[0];
      expected: ScenarioResult;
    };
    const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${baseUrl}/scenarios.html${scenarioHash(spec)}`);
    const result = page.locator("#scenario-result");
    await expect.poll(() => result.getAttribute("data-done"), { timeout: 40_000 }).toBe("true");
    expect(errors).toEqual([]);
    const inBrowser = JSON.parse((await result.textContent()) ?? "null") as ScenarioResult;
    expect(inBrowser.partitions).toEqual(expected.partitions);
    expect(inBrowser.offsets).toEqual(expected.offsets);
    expect(inBrowser).toEqual(expected);
    // The grid shows the final states, readable without colour.
    const states = await page
      .locator("[role=gridcell]")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-state")));
    expect(states).toEqual(expected.partitions.map((p) => p.state));
    await page.screenshot({ path: `${ARTIFACTS}/scenario.png`, fullPage: true });
    await page.close();
  });

  it("a hostile or broken URL fragment is refused on the page, saying what is wrong; nothing in it runs", async () => {
    const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("dialog", (d) => {
      errors.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    const xss = `<img src=x onerror="window.__xss=1">`;
    const cases: [string, RegExp][] = [
      [
        `#${encodeURIComponent(JSON.stringify({ topology: "toString", seed: 1, ops: [] }))}`,
        /^The URL holds no valid scenario: unknown topology 'toString'; use one of active-passive/,
      ],
      [
        `#${encodeURIComponent(JSON.stringify({ topology: xss, seed: 1, ops: [] }))}`,
        /^The URL holds no valid scenario: unknown topology '<img src=x onerror="window.__xss=1">'/,
      ],
      [
        `#${encodeURIComponent(JSON.stringify({ topology: "fan-in", seed: 1, ops: [{ op: "restart" }] }))}`,
        /^The URL holds no valid scenario: ops\[0\] \(restart\)\.node must be an integer, got nothing$/,
      ],
      [
        `#${encodeURIComponent(
          JSON.stringify({ topology: "fan-in", seed: 1, ops: [{ op: "advance", ms: 1e12 }] }),
        )}`,
        /^The URL holds no valid scenario: ops\[0\] \(advance\)\.ms must be an integer from 0 to 600,000/,
      ],
      ["#%E0%A4%A", /^The URL holds no valid scenario: the URL fragment is not URI-encoded JSON/],
    ];
    for (const [hash, message] of cases) {
      await page.goto(`${baseUrl}/scenarios.html${hash}`);
      await expect.poll(() => page.locator(".scenario-status").textContent()).toMatch(message);
      expect(await page.locator("#scenario-result").getAttribute("data-done")).toBeNull();
      expect(await page.locator("img").count()).toBe(0);
    }
    expect(await page.evaluate(() => (window as { __xss?: number }).__xss)).toBeUndefined();
    expect(errors).toEqual([]);
    await page.close();
  });
});
