import { afterEach, describe, expect, it } from "vitest";
import type { SourceCluster, SourceFetchRequest } from "../src/ports";
import {
  addTopicsWhenReady,
  createTopic,
  overrideSourceMethod,
  produce,
  twoEngineClusters,
} from "./engine-helpers";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/**
 * A source whose answers to verify's next `throttled()` fetches are what a Kafka broker over the client id's
 * fetch quota answers (KIP-219): no data, and a throttle time.
 */
function throttlingVerify() {
  let left = 0;
  const fetch = (real: SourceCluster, ...args: unknown[]) => {
    const request = args[0] as SourceFetchRequest;
    if (request.clientId !== "cluster-mirror-verify" || left === 0) return real.fetch(request);
    left--;
    return real.fetch(request).then((answer) => ({
      throttleTimeMs: 20,
      partitions: answer.partitions.map((p) => ({ ...p, recordSlices: [] })),
    }));
  };
  const e = twoEngineClusters({ wrapSources: overrideSourceMethod("source:9092", "fetch", fetch) });
  closers.push(e.close);
  return { ...e, throttle: (n: number) => (left = n), left: () => left };
}

describe("MirrorAdmin.verifyMirror: a source that throttles verify's fetches (its fetch quota)", () => {
  it("waits out the throttle time and compares, instead of reporting the batches missing", async () => {
    const { source, dest, throttle, left } = throttlingVerify();
    await createTopic(source, "orders", 1);
    await produce(source, "orders", 0, 10);
    await dest.mirroring.admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "orders");
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    const settled = async () =>
      (await dest.mirroring.admin.verifyMirror("m")).checks.every((c) => c.ok || c.notCompared);
    for (let i = 0; i < 200 && !(await settled()); i++) await new Promise((r) => setTimeout(r, 25));

    throttle(3);
    // Before: the throttled answer was read as "the source holds nothing there": batches reported missing.
    const v = await dest.mirroring.admin.verifyMirror("m");
    expect(left()).toBe(0);
    expect(v.checks[0]).toMatchObject({ check: "batches", ok: true, differences: [] });
    expect(v.ok).toBe(true);

    // A quota that never lets it through: not compared, and said why, rather than a difference.
    throttle(1000);
    const starved = await dest.mirroring.admin.verifyMirror("m");
    expect(starved.checks[0]!.ok).toBe(false);
    expect(starved.checks[0]!.differences).toEqual([
      "orders-0: the source refused the fetch at offset 0: the source throttled it 6 times (client id cluster-mirror-verify, last for 20 ms): its fetch quota there is too small to compare now; raise that quota or verify again later",
    ]);
  }, 60_000);
});
