import { mkdirSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { NodeRuntime } from "../../../cli/src/node/node-runtime";
import type { StateHistoryPage } from "../../src/history/history-types";
import { startMirroringNode } from "./node-harness";

const ARTIFACTS = new URL("../../artifacts/", import.meta.url).pathname;
const PARTITIONS = 6;

let browser: Browser;
let page: Page;
let runtime: NodeRuntime;
let baseUrl: string;
let token: string;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({ executablePath: inject("chromiumPath") });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  ({ runtime, baseUrl, token } = await startMirroringNode(PARTITIONS));
  // Opening the page with the node's token once gives the browser its session cookie.
  await page.goto(`${baseUrl}/ui/?token=${encodeURIComponent(token)}`);
});

afterAll(async () => {
  await browser?.close();
  await runtime?.close();
});

/** The states of the grid cells now in the DOM, sorted. */
async function gridStates(host: string): Promise<string[]> {
  return (
    await page
      .locator(`${host} [role=gridcell]`)
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-state") ?? ""))
  ).sort();
}

describe("the visualizer served by a node at /ui", () => {
  it("draws the partition chart, expands and collapses a lifecycle state", async () => {
    await page.goto(`${baseUrl}/ui/#charts`);
    const stopping = page.locator('#panel-charts g.node[data-id="mirrorPartition.STOPPING"]');
    await expect.poll(() => stopping.getAttribute("aria-expanded")).toBe("false");
    const before = await page.locator("#panel-charts g.node").count();
    expect(before).toBeGreaterThanOrEqual(9);
    await stopping.click();
    await expect.poll(() => stopping.getAttribute("aria-expanded"), { timeout: 20_000 }).toBe("true");
    const children = page.locator('#panel-charts g.node[data-id^="mirrorPartition.STOPPING."]');
    expect(await children.count()).toBeGreaterThan(0);
    await page.locator("#panel-charts").screenshot({ path: `${ARTIFACTS}/chart-expanded.png` });
    // Keyboard: Enter on the focused state collapses it again.
    await stopping.focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => stopping.getAttribute("aria-expanded"), { timeout: 20_000 }).toBe("false");
    expect(await children.count()).toBe(0);
  });

  it("shows the mirror's partitions live, and turns them STOPPED after a failover", async () => {
    await page.goto(`${baseUrl}/ui/#fleet`);
    await expect
      .poll(() => gridStates("#panel-fleet"), { timeout: 10_000 })
      .toEqual(Array(PARTITIONS).fill("MIRRORING"));
    await expect
      .poll(() => page.locator('#panel-fleet .chip[data-state="MIRRORING"]').textContent())
      .toBe(`${PARTITIONS}/${PARTITIONS} MIRRORING`);
    // When each partition's STOPPED commit is applied on the node, and when its cell first shows STOPPED
    // (same machine, same wall clock): the page shows committed state only, so never before the commit.
    const committedAt = new Map<string, number>();
    const unsubscribe = runtime.node.destination.mirroring.subscribeTransitions((t) => {
      if (t.record.state === "STOPPED") committedAt.set(`dr/m/${t.key.topic}-${t.key.partition}`, Date.now());
    });
    await page.evaluate(() => {
      const shownAt: Record<string, number> = {};
      (window as unknown as { stoppedShownAt: Record<string, number> }).stoppedShownAt = shownAt;
      const root = document.querySelector("#panel-fleet") as Element;
      new MutationObserver(() => {
        for (const cell of root.querySelectorAll('[role=gridcell][data-state="STOPPED"]')) {
          const id = cell.getAttribute("data-id") ?? "";
          shownAt[id] ??= Date.now();
        }
      }).observe(root, { subtree: true, childList: true, attributes: true });
    });
    // The failover (`kafka-mirrors --remove`): the node pushes each commit; the page redraws from the stream.
    await runtime.node.destination.mirroring.admin.removeTopics("m", "orders");
    await expect
      .poll(() => gridStates("#panel-fleet"), { timeout: 10_000, interval: 50 })
      .toEqual(Array(PARTITIONS).fill("STOPPED"));
    unsubscribe();
    const shownAt = await page.evaluate(
      () => (window as unknown as { stoppedShownAt: Record<string, number> }).stoppedShownAt,
    );
    expect(Object.keys(shownAt).sort()).toEqual([...committedAt.keys()].sort());
    const latencies = [...committedAt].map(([id, at]) => (shownAt[id] ?? Number.NaN) - at);
    for (const ms of latencies) expect(ms).toBeGreaterThanOrEqual(0);
    const sorted = [...latencies].sort((a, b) => a - b);
    console.log(
      `commit-to-page latency over ${sorted.length} partitions (wall clock, not asserted): median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms`,
    );
    const cell = page.locator("#panel-fleet [role=gridcell]").first();
    expect(await cell.getAttribute("aria-label")).toMatch(/^m orders-\d: STOPPED, no lag/);
    // The lifecycle chart of the fleet view counts them on STOPPED.
    await expect
      .poll(() =>
        page.locator('#panel-fleet .fleet-chart g.node[aria-label^="STOPPED"]').getAttribute("aria-label"),
      )
      .toMatch(new RegExp(`${PARTITIONS} partitions`));
    await page.screenshot({ path: `${ARTIFACTS}/fleet-stopped.png`, fullPage: true });
  });

  it("opened without the token: the live fleet says the node refused it and how to log in, not that it retries", async () => {
    const stranger = await browser.newPage(); // a fresh context: no cookie
    try {
      await stranger.goto(`${baseUrl}/ui/#fleet`);
      const status = stranger.locator("#panel-fleet .fleet-status");
      await expect.poll(() => status.textContent(), { timeout: 10_000 }).toMatch(/HTTP 401/);
      const text = (await status.textContent()) ?? "";
      expect(text).toMatch(/open the page once as \/ui\/\?token=TOKEN/);
      expect(text).not.toMatch(/Retrying/);
      expect(await status.getAttribute("data-connected")).toBe("false");
    } finally {
      await stranger.close();
    }
  });

  it("stays small with 10,000 partitions: only the rows in view are in the DOM, exceptions first", async () => {
    await page.goto(`${baseUrl}/ui/#fleet`);
    await expect.poll(() => gridStates("#panel-fleet")).toEqual(Array(PARTITIONS).fill("STOPPED"));
    const added = await page.evaluate(() => {
      const fleet = (window as unknown as { clusterMirrorFleet: { ingest(e: unknown[]): void } })
        .clusterMirrorFleet;
      const ctx = (partition: number, over: object = {}) => ({
        cluster: "big",
        mirror: "wide",
        topic: "events",
        topicId: "t",
        partition,
        stateEpoch: 2,
        leaderEpoch: 0,
        retryAttempt: 0,
        errorMessage: null,
        previousState: "PREPARING",
        lag: partition % 5,
        ...over,
      });
      const actor = (partition: number, state: string, over: object = {}) => ({
        type: "@xstate.actor",
        sessionId: `big/wide/events-${partition}`,
        actorRef: { id: `big/wide/events-${partition}`, sessionId: `big/wide/events-${partition}` },
        rootId: "big",
        parentId: "big/wide",
        createdAt: 0,
        _version: "1.0.0",
        snapshot: { value: state, context: ctx(partition, over), status: "active" },
      });
      fleet.ingest(Array.from({ length: 10_000 }, (_, p) => actor(p, "MIRRORING")));
      fleet.ingest([actor(9_999, "FAILED", { errorMessage: "source cluster unreachable", stateEpoch: 3 })]);
      return 10_000;
    });
    const grid = page.locator("#panel-fleet [role=grid]");
    await expect.poll(() => page.locator('#panel-fleet .chip[data-state="MIRRORING"]').count()).toBe(1);
    await expect
      .poll(() => page.locator('#panel-fleet section[data-mirror="wide"] .chip').allTextContents())
      .toEqual([`1/${added} FAILED`, `${added - 1}/${added} MIRRORING`]);
    expect(await page.locator('#panel-fleet section[data-mirror="wide"] .errors').textContent()).toContain(
      "source cluster unreachable",
    );
    const first = page.locator("#panel-fleet [role=gridcell]").first();
    await expect.poll(() => first.getAttribute("data-state")).toBe("FAILED");
    const rows = Number(await grid.getAttribute("aria-rowcount"));
    const cols = Number(await grid.getAttribute("aria-colcount"));
    expect(rows * cols).toBeGreaterThanOrEqual(added + PARTITIONS);
    expect(await page.locator("#panel-fleet [role=gridcell]").count()).toBeLessThan(400);
    // Keyboard: End moves the active cell to the last partition, which is then drawn.
    await grid.focus();
    await page.keyboard.press("End");
    await expect
      .poll(() => grid.getAttribute("aria-activedescendant"))
      .toBe(`grid-cell-${added + PARTITIONS - 1}`);
    expect(await page.locator(`#grid-cell-${added + PARTITIONS - 1}`).count()).toBe(1);
  });

  it("time travel: the slider shows the recorded past, before the failover", async () => {
    const res = await fetch(`${baseUrl}/ui/api/mirror-state?offset=0&limit=1000`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const history = (await res.json()) as StateHistoryPage;
    const firstStop = history.records.find(
      (r) =>
        r.key?.kind === "MirrorPartitionState" &&
        (r.value as { state?: string } | null)?.state === "STOPPING",
    );
    expect(firstStop).toBeDefined();
    await page.goto(`${baseUrl}/ui/#history`);
    const slider = page.locator("#history-slider");
    await expect.poll(() => slider.getAttribute("max"), { timeout: 10_000 }).toBe(String(history.total));
    await expect.poll(() => gridStates("#panel-history")).toEqual(Array(PARTITIONS).fill("STOPPED"));
    // Back to just before the first STOPPING record: every partition was MIRRORING then.
    await slider.evaluate((el, value) => {
      (el as HTMLInputElement).value = String(value);
      el.dispatchEvent(new Event("input", { bubbles: true }));
    }, firstStop!.position);
    await expect.poll(() => gridStates("#panel-history")).toEqual(Array(PARTITIONS).fill("MIRRORING"));
    expect(await page.locator("#panel-history [data-violations]").getAttribute("data-violations")).toBe("0");
    // Keyboard: End goes back to the present.
    await slider.focus();
    await page.keyboard.press("End");
    await expect.poll(() => gridStates("#panel-history")).toEqual(Array(PARTITIONS).fill("STOPPED"));
    // A partition's timeline, grouped by state.
    await page.locator("#panel-history [role=gridcell]").first().click();
    await expect
      .poll(() => page.locator("#panel-history .segment").evaluateAll((els) => els.map((e) => e.className)))
      .toEqual(
        expect.arrayContaining([
          expect.stringContaining("state-MIRRORING"),
          expect.stringContaining("state-STOPPED"),
        ]),
      );
    await page.screenshot({ path: `${ARTIFACTS}/history.png`, fullPage: true });
  });

  it("keeps the keyboard focus on a lifecycle state while live counts redraw the chart", async () => {
    await page.goto(`${baseUrl}/ui/#charts`);
    const stopping = page.locator('#panel-charts g.node[data-id="mirrorPartition.STOPPING"]');
    await expect.poll(() => stopping.getAttribute("aria-expanded")).toBe("false");
    await stopping.focus();
    const focusedId = () =>
      page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset?.id ?? null);
    expect(await focusedId()).toBe("mirrorPartition.STOPPING");
    // A partition changes state: the counts change and the chart is drawn again (a new SVG).
    await page.evaluate(() =>
      document.querySelector("#panel-charts .chart-host svg")?.setAttribute("data-old", ""),
    );
    await page.evaluate(() => {
      const fleet = (window as unknown as { clusterMirrorFleet: { ingest(e: unknown[]): void } })
        .clusterMirrorFleet;
      const id = "big/wide/events-7";
      fleet.ingest([
        {
          type: "@xstate.snapshot",
          sessionId: id,
          actorRef: { id, sessionId: id },
          rootId: "big",
          event: { type: "PAUSE" },
          snapshot: {
            value: "PAUSED",
            status: "active",
            context: {
              cluster: "big",
              mirror: "wide",
              topic: "events",
              topicId: "t",
              partition: 7,
              stateEpoch: 9,
              leaderEpoch: 0,
              retryAttempt: 0,
              errorMessage: null,
              previousState: "MIRRORING",
              lag: 0,
            },
          },
        },
      ]);
    });
    await expect.poll(() => page.locator("#panel-charts .chart-host svg[data-old]").count()).toBe(0);
    // Before: the redraw replaced the focused element, and the focus went back to the page (a keyboard
    // user's Enter then did nothing).
    expect(await focusedId()).toBe("mirrorPartition.STOPPING");
    await page.keyboard.press("Enter");
    await expect.poll(() => stopping.getAttribute("aria-expanded")).toBe("true");
  });
});
