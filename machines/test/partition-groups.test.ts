import { describe, expect, it } from "vitest";
import { type AnyActorRef, createActor } from "xstate";
import {
  coordinatorShardMachine,
  MAX_PARTITIONS_PER_GROUP,
  type MirrorPartitionsInput,
  mirrorGroupId,
} from "../src/index";

function mirrorOf(mirror: string, from: number, count: number): MirrorPartitionsInput {
  return {
    mirror,
    partitions: Array.from({ length: count }, (_, i) => ({ id: `${mirror}/t/${from + i}`, input: {} })),
  };
}

/** A shard made ACTIVE with `mirrors` loaded, recording every actor it stops (id, children left at the stop). */
function activeShard(mirrors: MirrorPartitionsInput[]) {
  const stopped: { id: string; children: number }[] = [];
  const shard = createActor(coordinatorShardMachine, {
    input: { partition: 0 },
    inspect: (e) => {
      if (e.type !== "@xstate.snapshot") return;
      const s = e.snapshot as { status: string; children?: Record<string, AnyActorRef> };
      if (s.status === "stopped")
        stopped.push({ id: (e.actorRef as AnyActorRef).id, children: Object.keys(s.children ?? {}).length });
    },
  }).start();
  shard.send({ type: "ELECTED", leaderEpoch: 1 });
  shard.send({ type: "LOAD_COMPLETED", leaderEpoch: 1, mirrors });
  return { shard, stopped };
}

function childIds(actor: { getSnapshot(): { children: Record<string, AnyActorRef | undefined> } }): string[] {
  return Object.keys(actor.getSnapshot().children);
}

describe("partition groups of a coordinator shard", () => {
  const n = MAX_PARTITIONS_PER_GROUP;

  it("holds at most MAX_PARTITIONS_PER_GROUP partitions per group, filling a mirror's last group first", () => {
    const { shard } = activeShard([mirrorOf("m", 0, 2 * n + 5), mirrorOf("x", 0, 3)]);
    expect(shard.getSnapshot().context.groups.map((g) => [g.id, g.size])).toEqual([
      [mirrorGroupId("m", 0), n],
      [mirrorGroupId("m", 1), n],
      [mirrorGroupId("m", 2), 5],
      [mirrorGroupId("x", 0), 3],
    ]);
    shard.send({ type: "SPAWN_PARTITIONS", mirrors: [mirrorOf("m", 2 * n + 5, n)] });
    const groups = shard.getSnapshot().context.groups;
    expect(groups.map((g) => [g.id, g.size])).toEqual([
      [mirrorGroupId("m", 0), n],
      [mirrorGroupId("m", 1), n],
      [mirrorGroupId("m", 2), n],
      [mirrorGroupId("x", 0), 3],
      [mirrorGroupId("m", 3), 5],
    ]);
    // The context's sizes are the groups' real children.
    const children = shard.getSnapshot().children as Record<string, AnyActorRef>;
    for (const g of groups) expect(childIds(children[g.id]!)).toHaveLength(g.size);
  });

  it("STOP_MIRROR stops the mirror's partitions newest first, each group once it is empty, other mirrors untouched", () => {
    const { shard, stopped } = activeShard([mirrorOf("m", 0, n + 2), mirrorOf("x", 0, 3)]);
    shard.send({ type: "STOP_MIRROR", mirror: "m" });
    const newestFirst = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({ id: `m/t/${from + count - 1 - i}`, children: 0 }));
    expect(stopped).toEqual([
      ...newestFirst(n, 2),
      { id: mirrorGroupId("m", 1), children: 0 },
      ...newestFirst(0, n),
      { id: mirrorGroupId("m", 0), children: 0 },
    ]);
    expect(childIds(shard)).toEqual([mirrorGroupId("x", 0)]);
    expect(shard.getSnapshot().context.groups.map((g) => g.id)).toEqual([mirrorGroupId("x", 0)]);
  });

  it("leaving ACTIVE stops every partition and group", () => {
    const { shard, stopped } = activeShard([mirrorOf("m", 0, n + 1), mirrorOf("x", 0, 2)]);
    shard.send({ type: "RESIGNED", leaderEpoch: 2 });
    expect(shard.getSnapshot().value).toBe("CLOSED");
    expect(childIds(shard)).toEqual([]);
    expect(stopped.map((s) => s.id)).toEqual([
      "x/t/1",
      "x/t/0",
      mirrorGroupId("x", 0),
      `m/t/${n}`,
      mirrorGroupId("m", 1),
      ...Array.from({ length: n }, (_, i) => `m/t/${n - 1 - i}`),
      mirrorGroupId("m", 0),
    ]);
    expect(stopped.every((s) => s.children === 0)).toBe(true);
  });
});
