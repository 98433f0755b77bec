import { afterEach, describe, expect, it } from "vitest";
import { PromoteCancelledError, PromoteTimeoutError } from "../src/admin/errors";
import type { SourceConnector } from "../src/ports";
import { addTopicsWhenReady, createTopic, produce, twoEngineClusters } from "./engine-helpers";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/** A source whose DescribeTopics (the metadata sync's first read) hangs while set: answers nothing, refuses nothing. */
function hangingDescribe() {
  let hanging = false;
  const held: (() => void)[] = [];
  const wrap = (inner: SourceConnector): SourceConnector => ({
    connect(name, configs, options) {
      const real = inner.connect(name, configs, options);
      return new Proxy(real, {
        get(target, prop, receiver) {
          if (prop !== "describeTopics") return Reflect.get(target, prop, receiver);
          return async (...args: unknown[]) => {
            if (hanging) await new Promise<void>((resolve) => held.push(resolve));
            return (target.describeTopics as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    },
  });
  return {
    wrap,
    held: () => held.length,
    set(on: boolean) {
      hanging = on;
      if (!on) for (const release of held.splice(0)) release();
    },
  };
}

async function caughtUp(hang: ReturnType<typeof hangingDescribe>) {
  const e = twoEngineClusters({ wrapSources: hang.wrap });
  closers.push(e.close);
  await createTopic(e.source, "orders", 1);
  await produce(e.source, "orders", 0, 5);
  await e.dest.mirroring.admin.createMirror("m", { "bootstrap.servers": e.source.bootstrap });
  await addTopicsWhenReady(e.dest, "m", "orders");
  await e.dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
  return e;
}

const within = <T>(p: Promise<T>, ms: number): Promise<T | "still running"> =>
  Promise.race([p, new Promise<"still running">((r) => setTimeout(() => r("still running"), ms))]);

describe("promote: the final metadata sync before the failover", () => {
  it("is bounded by the promote's timeout: a sync that hangs does not hold the promote forever, and nothing is failed over", async () => {
    const hang = hangingDescribe();
    const e = await caughtUp(hang);
    hang.set(true);
    const outcome = await within(
      // Long enough for the catch-up on a loaded machine (the partition is caught up already), so the time
      // runs out in the sync.
      e.dest.mirroring.admin.promoteTopics("m", "orders", { timeoutMs: 1_500 }).catch((err: unknown) => err),
      15_000,
    );
    expect(hang.held()).toBeGreaterThan(0);
    expect(outcome).toBeInstanceOf(PromoteTimeoutError);
    expect((outcome as Error).message).toMatch(/the final metadata sync .* did not finish in time/);
    hang.set(false);
    await new Promise((r) => setTimeout(r, 300));
    expect((await e.dest.mirroring.admin.describe("m")).map((r) => r.state)).toEqual(["MIRRORING"]);
  }, 30_000);

  it("is ended by the promote's cancel signal", async () => {
    const hang = hangingDescribe();
    const e = await caughtUp(hang);
    hang.set(true);
    const cancel = new AbortController();
    const promoted = e.dest.mirroring.admin
      .promoteTopics("m", "orders", { timeoutMs: 30_000, signal: cancel.signal })
      .catch((err: unknown) => err);
    while (hang.held() === 0) await new Promise((r) => setTimeout(r, 5));
    cancel.abort();
    expect(await within(promoted, 5_000)).toBeInstanceOf(PromoteCancelledError);
    hang.set(false);
    await new Promise((r) => setTimeout(r, 300));
    expect((await e.dest.mirroring.admin.describe("m")).map((r) => r.state)).toEqual(["MIRRORING"]);
  }, 30_000);
});
