import { InvalidMirrorStateError } from "@cluster-mirror/machines";
import { describe, expect, it } from "vitest";
import type { MirrorTopic } from "../src/metadata/mirror-topics";
import { driveTopics, failPartitions } from "../src/metadata/state-driver";
import type { MirrorCoordinators, MirrorPartitionKey } from "../src/ports";

/** Coordinators that hold every command until the test answers it, as an append waiting for its linger. */
function heldCoordinators() {
  const received: { key: MirrorPartitionKey; type: string; answer: (error?: unknown) => void }[] = [];
  const coordinators: MirrorCoordinators = {
    command: (key, command) =>
      new Promise<void>((resolve, reject) => {
        received.push({ key, type: command.type, answer: (error) => (error ? reject(error) : resolve()) });
      }),
    describe: () => [],
    tombstoneMirror: async () => {},
  };
  return { coordinators, received };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function topic(name: string, partitionCount: number, desired: MirrorTopic["desired"]): MirrorTopic {
  return {
    name,
    topicId: "00000000-0000-0000-0000-000000000001",
    partitionCount,
    mirror: "m",
    desired,
    configs: new Map(),
  };
}

describe("driveTopics", () => {
  it("sends every partition's command before any is acknowledged, so their records share an append", async () => {
    const { coordinators, received } = heldCoordinators();
    const driven = driveTopics(
      coordinators,
      [topic("a", 3, "REMOVED"), topic("b", 2, "REMOVED")],
      new Map([
        ["a:0", { state: "MIRRORING" } as never],
        ["a:1", { state: "MIRRORING" } as never],
        ["a:2", { state: "MIRRORING" } as never],
        ["b:0", { state: "PAUSED" } as never],
        ["b:1", { state: "STOPPED" } as never],
      ]),
    );
    await flush();
    // b-1 is STOPPED already: no command.
    expect(received.map((r) => `${r.key.topic}-${r.key.partition} ${r.type}`)).toEqual([
      "a-0 STOP",
      "a-1 STOP",
      "a-2 STOP",
      "b-0 STOP",
    ]);
    // Answered out of order; one refused because another driver got there first, one refused for real.
    received[3]!.answer();
    received[1]!.answer(new InvalidMirrorStateError("STOPPING", "STOP", null, "already stopping"));
    received[2]!.answer(new InvalidMirrorStateError("FAILED", "STOP", null, "refused"));
    received[0]!.answer();
    const result = await driven;
    expect(result.sent.map((s) => `${s.key.topic}-${s.key.partition}`)).toEqual(["a-0", "a-1", "b-0"]);
    expect(result.failed.map((f) => `${f.key.topic}-${f.key.partition}`)).toEqual(["a-2"]);
  });

  it("a command that throws instead of rejecting is reported, and the others still go", async () => {
    const coordinators: MirrorCoordinators = {
      command: (key) => {
        if (key.partition === 0) throw new Error("no coordinator");
        return Promise.resolve();
      },
      describe: () => [],
      tombstoneMirror: async () => {},
    };
    const result = await driveTopics(coordinators, [topic("a", 2, "ACTIVE")], new Map());
    expect(result.sent.map((s) => s.key.partition)).toEqual([1]);
    expect(result.failed.map((f) => [f.key.partition, String(f.error)])).toEqual([
      [0, "Error: no coordinator"],
    ]);
  });
});

describe("failPartitions", () => {
  it("sends every FAIL before any is acknowledged and counts the accepted ones", async () => {
    const { coordinators, received } = heldCoordinators();
    const keys = [0, 1, 2].map((partition) => ({ mirror: "m", topic: "a", topicId: "x", partition }));
    const done = failPartitions(
      coordinators,
      keys,
      new Map([["a:1", { state: "STOPPED" } as never]]),
      "gone",
    );
    await flush();
    expect(received.map((r) => [r.key.partition, r.type])).toEqual([
      [0, "FAIL"],
      [2, "FAIL"],
    ]);
    received[1]!.answer(new Error("fenced"));
    received[0]!.answer();
    expect(await done).toEqual({ failed: 1, errors: [new Error("fenced")] });
  });
});
