import { ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import type { MirrorPartitionEvent } from "@cluster-mirror/machines";
import { EffectExecutor } from "../src/coordinator/effect-executor";
import type { FaultEndsWhileLoading } from "../src/coordinator/fault-ends-while-loading";
import type { LeaderCatchUps } from "../src/coordinator/leader-catch-ups";
import { type MirrorPartitionRef, PartitionRuntime } from "../src/coordinator/partition-runtime";
import type { StateWriteBatcher } from "../src/coordinator/state-write-batcher";
import type { DestinationCluster, FetcherManager, SourceCluster } from "../src/ports";

/**
 * A partition handle whose actor only records the events it is sent; its snapshot's context is `context`
 * (by default a record at state epoch 3 and no change waiting). `loadedStateEpoch`: the state epoch of the
 * record a coordinator loaded it from (none: a key it created).
 */
export function recordingPartition(
  topic: string,
  p: number,
  context: object = { record: { stateEpoch: 3 }, pending: null },
  loadedStateEpoch?: number,
): { runtime: PartitionRuntime; events: MirrorPartitionEvent[] } {
  const key = { mirror: "m", topic, topicId: "AAAAAAAAAAAAAAAAAAAAAA", partition: p };
  const runtime = new PartitionRuntime(`m/${topic}/${p}`, key, loadedStateEpoch);
  const events: MirrorPartitionEvent[] = [];
  const snapshot = { status: "active", context };
  const ref = {
    id: runtime.id,
    send: (e: MirrorPartitionEvent) => events.push(e),
    getSnapshot: () => snapshot,
  } as unknown as MirrorPartitionRef;
  runtime.attach(ref);
  return { runtime, events };
}

/** An effect executor over a partial destination (and source, when the effects under test ask one). */
export function executorOver(
  destination: Partial<DestinationCluster>,
  options: {
    source?: Partial<SourceCluster>;
    stillCoordinator?: () => boolean;
    /** The executor's clock and scheduler, for a test that runs its timers. */
    clock?: ManualClock;
    scheduler?: ManualScheduler;
    /** The fetcher manager of each running destination broker (default: a test that asks none). */
    fetchers?: (brokerId: number) => FetcherManager | undefined;
    leaderCatchUps?: LeaderCatchUps;
    /** Whether a mirror's source did not answer the last metadata refresh. */
    sourceDown?: (mirror: string) => boolean;
    endedWhileLoading?: FaultEndsWhileLoading;
  } = {},
): EffectExecutor {
  const clock = options.clock ?? new ManualClock(0);
  return new EffectExecutor({
    brokerId: 0,
    destination: destination as DestinationCluster,
    sources: () => {
      if (!options.source) throw new Error("no source in this test");
      return options.source as SourceCluster;
    },
    sourceClusterId: () => "source",
    fetchers:
      options.fetchers ??
      (() => {
        throw new Error("no fetchers in this test");
      }),
    clock,
    random: new SeededRandom(1),
    scheduler: options.scheduler ?? new ManualScheduler(clock),
    writer: {} as StateWriteBatcher,
    isrPollIntervalMs: 100,
    stillCoordinator: options.stillCoordinator ?? (() => true),
    onLastMirrorEpochCommitted: () => {},
    ...(options.leaderCatchUps ? { leaderCatchUps: options.leaderCatchUps } : {}),
    ...(options.sourceDown ? { sourceDown: options.sourceDown } : {}),
    ...(options.endedWhileLoading ? { endedWhileLoading: options.endedWhileLoading } : {}),
  });
}
