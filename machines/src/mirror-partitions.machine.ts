import { assign, setup } from "xstate";
import { mirrorPartitionMachine } from "./mirror-partition.machine";
import type { MirrorPartitionInput } from "./mirror-partition.types";

/** One mirror partition actor to spawn: its actor id and the input it is rehydrated (or created) from. */
export interface MirrorPartitionSpawn {
  /** The child actor's id, unique within its mirror (`<topic>-<partition>/<topic id>`). */
  readonly id: string;
  readonly input: MirrorPartitionInput;
}

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
 * The partition actors of one mirror inside one coordinator shard. A coordinator shard spawns one group per
 * mirror it owns partitions of; the group spawns one `mirrorPartition` child per mirror partition, each
 * starting in `recovering` so its recovered state's effects run. Grouping by mirror keeps the two bulk
 * operations cheap: removing a mirror stops one child of the shard (which stops its partitions), and a
 * batch of new partitions is one spawn. The group holds no state of its own beyond the mirror's name.
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
