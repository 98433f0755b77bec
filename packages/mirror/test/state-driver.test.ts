import { InvalidMirrorStateError } from "@cluster-mirror/machines";
import { describe, expect, it } from "vitest";
import type { MirrorTopic } from "../src/metadata/mirror-topics";
import { driveTopics, failPartitions, viewsByPartition } from "../src/metadata/state-driver";
import type { MirrorCoordinators, MirrorPartitionKey, MirrorPartitionView } from "../src/ports";

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
    // Each topic its own id, as on a cluster (a partition is known by mirror, topic id and number).
    topicId: `00000000-0000-0000-0000-${name.padStart(12, "0")}`,
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

  it("a drive joins the same command another drive has in flight: sent once, one outcome for both", async () => {
    const { coordinators, received } = heldCoordinators();
    const mirroring = new Map([
      ["a:0", { state: "MIRRORING" } as never],
      ["a:1", { state: "MIRRORING" } as never],
    ]);
    // The admin API's drive, then the metadata manager's on the `.removed` record, both before any commit.
    const admin = driveTopics(coordinators, [topic("a", 2, "REMOVED")], mirroring);
    const manager = driveTopics(coordinators, [topic("a", 2, "REMOVED")], mirroring);
    await flush();
    expect(received.map((r) => `${r.key.partition} ${r.type}`)).toEqual(["0 STOP", "1 STOP"]);
    // Neither drive is done before the commands it joined are answered.
    let managerDone = false;
    void manager.then(() => {
      managerDone = true;
    });
    received[0]!.answer();
    await flush();
    expect(managerDone).toBe(false);
    // A real refusal reaches both drivers.
    const refusal = new InvalidMirrorStateError("FAILED", "STOP", null, "refused");
    received[1]!.answer(refusal);
    for (const result of [await admin, await manager]) {
      expect(result.sent.map((s) => s.key.partition)).toEqual([0]);
      expect(result.failed).toEqual([
        { key: expect.objectContaining({ partition: 1 }), command: "STOP", error: refusal },
      ]);
    }
    // Settled commands are not joined: a later drive sends again, and another command is never joined.
    void driveTopics(coordinators, [topic("a", 2, "REMOVED")], mirroring);
    void driveTopics(coordinators, [topic("a", 2, "ACTIVE")], new Map());
    await flush();
    expect(received.slice(2).map((r) => `${r.key.partition} ${r.type}`)).toEqual([
      "0 STOP",
      "1 STOP",
      "0 START",
      "1 START",
    ]);
  });

  it("drives of different coordinators never join each other", async () => {
    const one = heldCoordinators();
    const two = heldCoordinators();
    const views = new Map([["a:0", { state: "MIRRORING" } as never]]);
    void driveTopics(one.coordinators, [topic("a", 1, "REMOVED")], views);
    void driveTopics(two.coordinators, [topic("a", 1, "REMOVED")], views);
    await flush();
    expect([one.received.length, two.received.length]).toEqual([1, 1]);
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

describe("viewsByPartition", () => {
  const view = (topicId: string, state: string): MirrorPartitionView => ({
    key: { mirror: "m", topic: "orders", topicId, partition: 0 },
    state,
    stateEpoch: 1,
    leaderEpoch: 0,
    lastMirrorEpoch: -1,
    errorMessage: null,
    retryAttempt: 0,
    previousState: null,
  });
  const image = { topic: (name: string) => (name === "orders" ? { topicId: "new" } : undefined) };

  it("takes the view of the topic's current id over an earlier incarnation's, in either order", () => {
    // The earlier incarnation is STOPPED, the current one still STOPPING: a check must see STOPPING.
    for (const views of [
      [view("new", "STOPPING"), view("old", "STOPPED")],
      [view("old", "STOPPED"), view("new", "STOPPING")],
    ]) {
      expect(viewsByPartition(views, image).get("orders:0")?.state).toBe("STOPPING");
    }
    // Without the image the last one wins (the earlier behaviour).
    expect(viewsByPartition([view("new", "STOPPING"), view("old", "STOPPED")]).get("orders:0")?.state).toBe(
      "STOPPED",
    );
  });
});
