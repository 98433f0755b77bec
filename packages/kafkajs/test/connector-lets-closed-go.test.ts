import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { KafkajsSourceConnector } from "../src/index";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** A source of `connector`, closed: only the returned weak reference is kept here. */
async function connectedThenClosed(connector: KafkajsSourceConnector): Promise<WeakRef<object>> {
  const source = connector.connect("m", { "bootstrap.servers": "127.0.0.1:1" });
  await source.close?.();
  return new WeakRef(source);
}

describe("KafkajsSourceConnector", () => {
  it("lets a closed source go at its next connect: a node reconnecting at every config change keeps only the live ones", async () => {
    const connector = new KafkajsSourceConnector();
    // Nothing is dialled until a call is made: connecting and closing opens no socket.
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 5; i++) refs.push(await connectedThenClosed(connector));
    const live = connector.connect("m", { "bootstrap.servers": "127.0.0.1:1" });
    for (let i = 0; i < 3 && refs.some((r) => r.deref() !== undefined); i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
    await connector.close();
    await live.close?.();
  });
});
