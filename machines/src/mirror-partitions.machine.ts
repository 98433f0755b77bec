import { assign, setup } from "xstate";
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
 * batch copies, and starts the spawned actors from a queue it drains with `Array.shift()`: both grow with
 * the number of children, so a group of 100,000 takes minutes. Groups of at most this many keep every
 * spawn cheap; a mirror with more partitions gets several groups.
 */
export const MAX_PARTITIONS_PER_GROUP = 1024;

/** Input of a mirror's partition group: the mirror and the partitions it starts with. */
export interface MirrorPartitionsInput {
  readonly mirror: string;
  readonly partitions: readonly MirrorPartitionSpawn[];
}

/** Events of a mirror's partition group. */
export type MirrorPartitionsEvent = {
  /** Spawn partition actors for keys the coordinator had no state for (a batch: one copy of the children). */
  readonly type: "SPAWN_PARTITIONS";
  readonly partitions: readonly MirrorPartitionSpawn[];
};

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
  },
});
