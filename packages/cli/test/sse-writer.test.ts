import { describe, expect, it } from "vitest";
import { sseWriter } from "../src/node/sse-writer";

/** A response whose socket takes nothing: every write stays buffered, as for a client that stopped reading. */
function stalledResponse() {
  const written: string[] = [];
  const state = { destroyed: false };
  return {
    written,
    state,
    write(chunk: string) {
      written.push(chunk);
      return false;
    },
    get writableLength() {
      return state.destroyed ? 0 : written.reduce((n, c) => n + Buffer.byteLength(c), 0);
    },
    destroy() {
      state.destroyed = true;
    },
  };
}

describe("the live stream's writer", () => {
  it("ends the stream of a client that stopped reading once more than the limit waits unsent, and writes no more", () => {
    const res = stalledResponse();
    let overflows = 0;
    const write = sseWriter(res, () => overflows++, 100);
    for (let i = 0; i < 50; i++) write(`data: ${"x".repeat(20)}\n\n`);
    // 3 events (84 bytes) were under the limit, so the 4th was written; the 5th found 112 waiting and ended it.
    expect(res.written).toHaveLength(4);
    expect(overflows).toBe(1);
  });

  it("drops a client that stopped reading: destroys its connection, so what waits unsent is freed at once", () => {
    // Ending the response instead would queue the end behind the unsent bytes: they stay in the node's
    // memory, and the connection open, for as long as the client stays connected without reading.
    const res = stalledResponse();
    const write = sseWriter(res, () => {}, 100);
    for (let i = 0; i < 50; i++) write(`data: ${"x".repeat(20)}\n\n`);
    expect(res.state.destroyed).toBe(true);
    expect(res.writableLength).toBe(0);
  });

  it("keeps writing to a client that reads (nothing waits unsent)", () => {
    const written: string[] = [];
    let destroyed = false;
    const res = {
      write: (c: string) => written.push(c) > 0,
      writableLength: 0,
      destroy: () => {
        destroyed = true;
      },
    };
    let overflows = 0;
    const write = sseWriter(res, () => overflows++, 100);
    for (let i = 0; i < 50; i++) write(`data: ${"x".repeat(20)}\n\n`);
    expect(written).toHaveLength(50);
    expect(overflows).toBe(0);
    expect(destroyed).toBe(false);
  });
});
