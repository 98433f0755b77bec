import { afterEach, describe, expect, it, vi } from "vitest";
import * as fs from "../src/platform/fs.browser";
import * as fsNode from "../src/platform/fs.node";
import * as os from "../src/platform/os.browser";
import * as osNode from "../src/platform/os.node";
import * as path from "../src/platform/path.browser";
import * as pathNode from "../src/platform/path.node";
import { runSoon } from "../src/run-soon";

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("browser platform seams of @cluster-mirror/cluster", () => {
  it("stand in for every Node function the data dir and its lock use", () => {
    expect(Object.keys(fs).sort()).toEqual(Object.keys(fsNode).sort());
    expect(Object.keys(os).sort()).toEqual(Object.keys(osNode).sort());
    expect(Object.keys(path).sort()).toEqual(Object.keys(pathNode).sort());
    expect(() => os.hostname()).toThrow(/os\.hostname is not available in a browser build/);
  });

  it("runSoon without setImmediate (a browser) runs tasks in order on MessageChannel, skipping cancelled ones", async () => {
    vi.stubGlobal("setImmediate", undefined);
    const ran: string[] = [];
    const done = new Promise<void>((resolve) => {
      runSoon(() => ran.push("a"));
      const cancel = runSoon(() => ran.push("b"));
      runSoon(() => ran.push("c"));
      runSoon(resolve);
      cancel();
    });
    expect(ran).toEqual([]);
    await done;
    expect(ran).toEqual(["a", "c"]);
  });
});
