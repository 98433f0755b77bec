import * as net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { framedSocketFactory, isReusedReadMemory, ResponseFramer } from "../src/framed-socket";
import { type KjsBroker, sendRaw } from "../src/kafkajs-internals";

/** A size-prefixed Kafka frame around `body`. */
function frame(body: Buffer): Buffer {
  const out = Buffer.alloc(4 + body.length);
  out.writeInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

/** Bodies of several sizes: empty, small, and one larger than the first staging buffer (64 KiB). */
const bodies = [
  Buffer.from("first"),
  Buffer.alloc(0),
  Buffer.from("a somewhat longer second response body"),
  Buffer.alloc(100_000, 0xab),
  Buffer.from("after the large one"),
];
const stream = Buffer.concat(bodies.map(frame));

/** Feeds `stream` to a framer in reads of `readSize` bytes through one reused read buffer. */
function feed(readSize: number): Buffer[] {
  const got: Buffer[] = [];
  const framer = new ResponseFramer((f) => got.push(Buffer.from(f)));
  const read = Buffer.alloc(readSize);
  for (let at = 0; at < stream.length; at += readSize) {
    const n = Math.min(readSize, stream.length - at);
    stream.copy(read, 0, at, at + n);
    framer.push(read, n);
    read.fill(0xee); // the read buffer is reused: nothing may keep pointing into it
  }
  return got;
}

describe("ResponseFramer", () => {
  it("hands on each size-prefixed frame whole, however the reads cut the stream", () => {
    const expected = bodies.map(frame);
    for (const readSize of [1, 2, 3, 4, 5, 7, 13, 4096, 65_536, stream.length]) {
      const got = feed(readSize);
      expect(got.length, `reads of ${readSize} bytes`).toBe(expected.length);
      for (const [i, f] of got.entries())
        expect(f.equals(expected[i]!), `frame ${i}, reads of ${readSize}`).toBe(true);
    }
  });

  it("hands the first frame on in memory of its own; later frames are views of reused staging memory", () => {
    const seen: { frame: Buffer; reused: boolean; text: string }[] = [];
    const framer = new ResponseFramer((f) =>
      seen.push({ frame: f, reused: isReusedReadMemory(f), text: f.subarray(4).toString() }),
    );
    // One read, then one read per frame (the staging memory is reused by each).
    const two = Buffer.concat([frame(Buffer.from("one")), frame(Buffer.from("two"))]);
    framer.push(two, two.length);
    const three = frame(Buffer.from("333"));
    framer.push(three, three.length);
    expect(seen.map((s) => s.text)).toEqual(["one", "two", "333"]);
    expect(seen.map((s) => s.reused)).toEqual([false, true, true]);
    // The first frame is the caller's to keep; the second was overwritten by the third.
    expect(seen[0]!.frame.subarray(4).toString()).toBe("one");
    expect(seen[1]!.frame.subarray(4).toString()).toBe("333");
  });

  it("reads a large first frame straight into memory sized to it, and later ones into the staging buffer", () => {
    const got: { frame: Buffer; reused: boolean }[] = [];
    const framer = new ResponseFramer((f) => got.push({ frame: f, reused: isReusedReadMemory(f) }));
    const big = frame(Buffer.alloc(200_000, 0x5a));
    const next = frame(Buffer.alloc(150_000, 0x33));
    // As a socket does: each read writes into the framer's own buffer, at most 50,000 bytes at a time.
    const wire = Buffer.concat([big, next]);
    const reads: number[] = [];
    for (let at = 0; at < wire.length; ) {
      const into = framer.readBuffer();
      const n = Math.min(into.length, 50_000, wire.length - at);
      wire.copy(into, 0, at, at + n);
      reads.push(n);
      at += n;
      framer.wrote(n);
    }
    expect(got.length).toBe(2);
    expect(got[0]!.frame.equals(big)).toBe(true);
    expect(got[0]!.reused).toBe(false);
    expect(got[0]!.frame.buffer.byteLength).toBe(big.length); // its own memory, exactly its size
    expect(got[1]!.frame.equals(next)).toBe(true);
    expect(got[1]!.reused).toBe(true);
    // No read ran past the end of the frame whose size it knew.
    expect(reads).toEqual([50_000, 50_000, 50_000, 50_000, 4, 50_000, 50_000, 50_000, 4]);
  });

  it("refuses a negative size prefix: the stream is broken", () => {
    const framer = new ResponseFramer(() => {});
    const bad = Buffer.alloc(4);
    bad.writeInt32BE(-5, 0);
    expect(() => framer.push(bad, 4)).toThrow(/response of -5 bytes: the stream is broken/);
  });
});

describe("framedSocketFactory", () => {
  let server: net.Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it("emits one data event per whole response from a real socket", async () => {
    const responses = [
      frame(Buffer.from("hello")),
      frame(Buffer.alloc(300_000, 1)),
      frame(Buffer.from("bye")),
    ];
    const wire = Buffer.concat(responses);
    server = net.createServer((peer) => {
      // Written in uneven pieces, with pauses, so reads cut frames anywhere.
      let at = 0;
      const step = () => {
        if (at >= wire.length) return peer.end();
        const n = Math.min(wire.length - at, 1 + ((at * 7919) % 90_001));
        peer.write(wire.subarray(at, at + n));
        at += n;
        setTimeout(step, 1);
      };
      step();
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    const fallback = () => {
      throw new Error("a plaintext socket must not use the fallback");
    };
    const got: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      const socket = framedSocketFactory(fallback)({
        host: "127.0.0.1",
        port,
        ssl: null,
        onConnect: () => {},
      });
      socket.on("data", (d: Buffer) => got.push(Buffer.from(d)));
      socket.on("end", () => resolve());
      socket.on("error", reject);
    });
    expect(got.length).toBe(responses.length);
    for (const [i, g] of got.entries()) expect(g.equals(responses[i]!)).toBe(true);
  });

  it("leaves TLS connections to kafkajs's own socket factory", () => {
    const made: unknown[] = [];
    const socket = new net.Socket();
    const fallback = (args: unknown) => {
      made.push(args);
      return socket;
    };
    const args = { host: "h", port: 1, ssl: { rejectUnauthorized: true }, onConnect: () => {} };
    expect(framedSocketFactory(fallback)(args)).toBe(socket);
    expect(made).toEqual([args]);
  });
});

describe("sendRaw", () => {
  it("refuses a response that still lies in a socket's reused read memory", async () => {
    let view: Buffer | undefined;
    const framer = new ResponseFramer((f) => {
      view = f;
    });
    const frames = Buffer.concat([frame(Buffer.from("first")), frame(Buffer.from([0, 0, 0, 0, 0]))]);
    framer.push(frames, frames.length);
    const broker = {
      connectionPool: {
        send: async (r: { response: { decode: (payload: Buffer) => Promise<unknown> } }) =>
          r.response.decode(view!.subarray(4)),
      },
    } as unknown as KjsBroker;
    const request = { apiKey: 1, apiVersion: 12, apiName: "Fetch", body: Buffer.alloc(0) };
    await expect(sendRaw(broker, request, () => ({ throttleTimeMs: 0 }))).rejects.toThrow(
      /Fetch response still in the socket's reused read memory/,
    );
  });
});
