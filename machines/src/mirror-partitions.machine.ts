import { assign, enqueueActions, setup } from "xstate";
import { mirrorPartitionMachine } from "./mirror-partition.machine";
import type { MirrorPartitionInput } from "./mirror-partition.types";

/** One mirror partition actor to spawn: its actor id and the input it is rehydrated (or created) from. */
export interface MirrorPartitionSpawn {
  /** The child actor's id: unique in the shard (its coordinator finds the actor as its group's child). */
  readonly id: string;
  readonly input: MirrorPartitionInput;
}

/**
 * Most partition actors one group spawns. XState keeps a parent's children in one object that every spawn
 * batch and every stop of a child copies, so stopping a parent with k children costs about k^2/2 key copies
 * (0.2-3 us each, the object being in dictionary mode once a key was deleted). Small groups keep that cheap:
 * per partition a group of 64 costs about 14 us to stop, one of 1,024 cost 1.7 ms (closing 20,000
 * partitions took 76 s of CPU; now 1.2 s for 40,000). The shard then holds n/64 groups, which it stops
 * the same way: at 100,000 partitions about 1,600 groups, about 1.8 s in a profile of that unload, as much
 * as the groups' own stops (2.1 s; garbage collection took the rest of its 14 s). Smaller groups would
 * make the shard's share grow faster than the groups' share shrinks. A mirror with more partitions gets
 * more groups.
 */
export const MAX_PARTITIONS_PER_GROUP = 64;

/** Input of a mirror's partition group: the mirror and the partitions it starts with. */
export interface MirrorPartitionsInput {
  readonly mirror: string;
  readonly partitions: readonly MirrorPartitionSpawn[];
}

/** Events of a mirror's partition group. */
export type MirrorPartitionsEvent =
  | {
      /** Spawn partition actors for keys the coordinator had no state for (a batch: one copy of the children). */
      readonly type: "SPAWN_PARTITIONS";
      readonly partitions: readonly MirrorPartitionSpawn[];
    }
  /**
   * Stop every partition actor, newest first; the shard sends it just before it stops the group. XState
   * stops a child by copying its parent's children without it, and when it stops a parent it stops the
   * children oldest first: the copies then lose their first key, which turns each one into a slow
   * dictionary copy (about 3 us per remaining child, profiled: a 1,024-partition group took 1.7 s, and
   * closing 20,000 partitions 76 s). Stopped newest first, each copy loses its last key, which V8 copies
   * about six times faster (about 0.5 us per remaining child, measured); with at most 64 children a
   * group's stop costs about a millisecond.
   */
  | { readonly type: "STOP_PARTITIONS" };

/**
 * Partition actors of one mirror inside one coordinator shard. A coordinator shard spawns groups per mirror
 * it owns partitions of (each with at most {@link MAX_PARTITIONS_PER_GROUP}); a group spawns one
 * `mirrorPartition` child per mirror partition, each starting in `recovering` so its recovered state's
 * effects run. Grouping keeps the bulk operations cheap: removing a mirror stops its groups (which stop
 * their partitions), and a batch of new partitions is one spawn. A group holds no state of its own beyond
 * the mirror's name.
 */
export const mirrorPartitionsMachine = setup({
  types: {} as {
    context: { readonly mirror: string };
    events: MirrorPartitionsEvent;
    input: MirrorPartitionsInput;
  },
  actors: { mirrorPartition: mirrorPartitionMachine },
}).createMachine({
  id: "mirrorPartitions",
  context: ({ input, spawn }) => {
    for (const p of input.partitions) spawn("mirrorPartition", { id: p.id, input: p.input });
    return { mirror: input.mirror };
  },
  on: {
    SPAWN_PARTITIONS: {
      actions: assign(({ event, spawn }) => {
        for (const p of event.partitions) spawn("mirrorPartition", { id: p.id, input: p.input });
        return {};
      }),
    },
    STOP_PARTITIONS: {
      actions: enqueueActions(({ self, enqueue }) => {
        const ids = Object.keys(self.getSnapshot().children);
        for (let i = ids.length - 1; i >= 0; i--) enqueue.stopChild(ids[i]!);
      }),
    },
  },
});
