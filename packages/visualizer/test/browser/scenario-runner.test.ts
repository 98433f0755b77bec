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
});
